-- Point tables that are nobody's partition and have no dataset row: what a killed load
-- leaves behind (a committed leaf raw.points_<id>_<n>, or a dataset's partition
-- raw.points_<id>). The caller drops those whose load is not running any more.
SELECT c.relname, substring(c.relname FROM '^points_([0-9]+)')::integer AS dataset_id
FROM pg_class AS c
JOIN pg_namespace AS n ON n.oid = c.relnamespace
WHERE n.nspname = 'raw'
  AND c.relkind IN ('r', 'p')
  AND c.relname ~ '^points_[0-9]+(_[0-9]+)?$'
  AND NOT c.relispartition
  AND NOT EXISTS (SELECT 1 FROM raw.datasets AS d
                  WHERE d.dataset_id = substring(c.relname FROM '^points_([0-9]+)')::integer);
