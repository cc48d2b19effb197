-- Tables of a load that are nobody's partition and have no dataset row: what a killed
-- load leaves behind (a committed leaf raw.points_<id>_<n>, a dataset's partition
-- raw.points_<id>, its persons raw.persons_<id>). The caller drops those whose load is
-- not running any more. Columns: relname, dataset_id.
SELECT c.relname,
       substring(c.relname FROM '^(?:points|persons)_([0-9]+)')::integer AS dataset_id
FROM pg_class AS c
WHERE c.relnamespace = 'raw'::regnamespace
  AND c.relkind IN ('r', 'p')
  AND c.relname ~ '^(points_[0-9]+(_[0-9]+)?|persons_[0-9]+)$'
  AND NOT c.relispartition
  AND NOT EXISTS (SELECT 1 FROM raw.datasets AS d
                  WHERE d.dataset_id = substring(c.relname FROM '^(?:points|persons)_([0-9]+)')::integer);
