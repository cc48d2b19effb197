-- A fresh, index-free table for one dataset's points: COPY into it is as cheap as it gets
-- (created in this transaction, so with wal_level=minimal COPY writes no WAL).
-- Params: dataset_id. Identifiers: partition.
CREATE TABLE {partition} (LIKE raw.points INCLUDING DEFAULTS INCLUDING GENERATED);
ALTER TABLE {partition} ALTER COLUMN dataset_id SET DEFAULT %(dataset_id)s;
