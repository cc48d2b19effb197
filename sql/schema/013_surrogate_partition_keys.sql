-- 013_surrogate_partition_keys: a dataset's leaves are partitioned by a surrogate
-- trajectory key, not by traj_id. Safe to re-run: it converts the partitions still cut by
-- traj_id (or not cut at all) and leaves the others alone.
--
-- Why (issue 7, finding 3): partition bounds and CHECK constraints sit in pg_class and
-- pg_constraint, which every role reads, and pg_get_expr / pg_get_constraintdef print
-- them without asking for any privilege on the table. Cut by traj_id, a leaf's bounds
-- were raw trajectory ids ('381_0001': person 381's first trip) for anyone, the analyst
-- included. traj_key (bigint, given by the loader: anonymizers/loading/leaves.py) is the
-- leaf's number times 2^32 plus the trajectory's rank in the dataset in traj_id byte
-- order; leaf n holds [n * 2^32, (n + 1) * 2^32), bounds that depend on nothing but n.
-- Readers of raw.points still read traj_id, user_id, t, lon, lat and geom.
--
-- A converted dataset has one leaf, raw.points_<id>_0, with the loader's index names;
-- its rows are rewritten in (traj_id, t) order. The load report of a dataset loaded
-- before gains persons_known: true (its points had a user_id column, which was required).

ALTER TABLE raw.points ADD COLUMN IF NOT EXISTS traj_key bigint;
COMMENT ON COLUMN raw.points.traj_key IS
    'Surrogate trajectory key of the loader, the key of the leaf partitions: the leaf''s '
    'number times 2^32 plus the trajectory''s rank in traj_id order. Identifies nobody.';

DO $$
DECLARE
    part record;
    stride constant bigint := 4294967296;  -- 2^32, leaves.py KEY_STRIDE
BEGIN
    FOR part IN
        SELECT c.relname,
               substring(pg_get_expr(c.relpartbound, c.oid) FROM 'IN \((\d+)\)')::integer
                   AS dataset_id
        FROM pg_inherits AS i JOIN pg_class AS c ON c.oid = i.inhrelid
        WHERE i.inhparent = 'raw.points'::regclass
          AND (c.relkind <> 'p' OR pg_get_partkeydef(c.oid) <> 'RANGE (traj_key)')
    LOOP
        -- The new partition is built beside the old one, without indexes: attaching it
        -- to raw.points builds them, named as the loader's are, once the old are gone.
        EXECUTE format('CREATE TABLE raw.%I (LIKE raw.points INCLUDING DEFAULTS '
                       'INCLUDING GENERATED, CONSTRAINT in_dataset CHECK (dataset_id = %s)) '
                       'PARTITION BY RANGE (traj_key)', part.relname || '_keyed', part.dataset_id);
        EXECUTE format('CREATE TABLE raw.%I PARTITION OF raw.%I FOR VALUES FROM (0) TO (%s)',
                       part.relname || '_keyed_0', part.relname || '_keyed', stride);
        EXECUTE format('INSERT INTO raw.%I (dataset_id, traj_key, traj_id, user_id, t, lon, lat) '
                       'SELECT dataset_id, dense_rank() OVER (ORDER BY traj_id COLLATE "C") - 1, '
                       'traj_id, user_id, t, lon, lat FROM raw.%I '
                       'ORDER BY traj_id COLLATE "C", t',
                       part.relname || '_keyed', part.relname);
        EXECUTE format('ALTER TABLE raw.points DETACH PARTITION raw.%I', part.relname);
        EXECUTE format('DROP TABLE raw.%I', part.relname);  -- with its leaves
        EXECUTE format('ALTER TABLE raw.%I RENAME TO %I',
                       part.relname || '_keyed_0', part.relname || '_0');
        EXECUTE format('ALTER TABLE raw.%I RENAME TO %I', part.relname || '_keyed', part.relname);
        EXECUTE format('ALTER TABLE raw.points ATTACH PARTITION raw.%I FOR VALUES IN (%s)',
                       part.relname, part.dataset_id);
        EXECUTE format('ANALYZE raw.%I', part.relname || '_0');
    END LOOP;
END
$$;

-- Every row has its key now (a fresh database has no rows): no-op when already NOT NULL.
ALTER TABLE raw.points ALTER COLUMN traj_key SET NOT NULL;

UPDATE raw.datasets SET load_report = load_report || '{"persons_known": true}'::jsonb
WHERE NOT load_report ? 'persons_known';
