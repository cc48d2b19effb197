-- A fresh, index-free, unattached leaf for some of one dataset's points: those whose
-- traj_key lies in [lower, upper), the leaf's own key range (anonymizers/loading/leaves.py:
-- it depends on the leaf's number only, never on an id). COPY into it is as cheap as it
-- gets: created in the COPY's transaction, so with wal_level=minimal nothing is WAL-logged.
-- Nobody reads it until it is attached.
-- The CHECKs are made here, so that COPY checks each row as it goes (ns per row) and
-- the ATTACHes need no scan: a CHECK added after the COPY would read the table again.
-- Params: dataset_id, lower, upper. Identifiers: leaf.
CREATE TABLE {leaf} (
    LIKE raw.points INCLUDING DEFAULTS INCLUDING GENERATED,
    CONSTRAINT in_dataset CHECK (dataset_id = %(dataset_id)s),
    CONSTRAINT in_traj_key_range CHECK (traj_key >= %(lower)s::bigint
                                        AND traj_key < %(upper)s::bigint)
);
ALTER TABLE {leaf} ALTER COLUMN dataset_id SET DEFAULT %(dataset_id)s;
