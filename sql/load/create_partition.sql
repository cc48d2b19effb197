-- A fresh, index-free, unattached table for one dataset's points: COPY into it is as
-- cheap as it gets (created in the COPY's transaction, so with wal_level=minimal COPY
-- writes no WAL). It is invisible to readers of raw.points until attached.
-- The CHECK is made here, so that COPY checks each row as it goes (a few ns per row)
-- and ATTACH needs no scan; adding it after the COPY would read the whole table again.
-- Params: dataset_id. Identifiers: partition.
CREATE TABLE {partition} (
    LIKE raw.points INCLUDING DEFAULTS INCLUDING GENERATED,
    CHECK (dataset_id = %(dataset_id)s)
);
ALTER TABLE {partition} ALTER COLUMN dataset_id SET DEFAULT %(dataset_id)s;
