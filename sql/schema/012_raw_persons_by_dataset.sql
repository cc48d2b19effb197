-- 012_raw_persons_by_dataset: raw.persons becomes partitioned by dataset, like raw.points.
-- Safe to re-run: it converts a plain raw.persons (a database of the previous contract)
-- and does nothing to a partitioned one.
--
-- Why: the loader can then copy a dataset's persons into a table of their own while its
-- points load, and attach it when publishing, where the foreign key to raw.datasets is
-- checked by one query. Copied into the shared table instead, every row ran the foreign
-- key's trigger and a primary-key insert inside the publish transaction: 0.22 s for the
-- 32k persons of the 1M-fix benchmark, against 0.03 s to fill and index a table of their
-- own. A --replace drops the old dataset's persons with its partition.
DO $$
DECLARE
    dataset integer;
BEGIN
    IF (SELECT relkind FROM pg_class WHERE oid = 'raw.persons'::regclass) = 'r' THEN
        ALTER TABLE raw.persons RENAME TO persons_unpartitioned;
        ALTER INDEX raw.persons_pkey RENAME TO persons_unpartitioned_pkey;
        CREATE TABLE raw.persons (
            LIKE raw.persons_unpartitioned INCLUDING DEFAULTS,
            PRIMARY KEY (dataset_id, user_id),
            FOREIGN KEY (dataset_id) REFERENCES raw.datasets ON DELETE CASCADE
        ) PARTITION BY LIST (dataset_id);
        FOR dataset IN SELECT DISTINCT dataset_id FROM raw.persons_unpartitioned LOOP
            EXECUTE format('CREATE TABLE raw.%I PARTITION OF raw.persons FOR VALUES IN (%s)',
                           'persons_' || dataset, dataset);
        END LOOP;
        INSERT INTO raw.persons SELECT * FROM raw.persons_unpartitioned;
        DROP TABLE raw.persons_unpartitioned;
        COMMENT ON TABLE raw.persons IS
            'Demographic attributes per person; columns other than the known ones go to attributes.';
    END IF;
END
$$;
