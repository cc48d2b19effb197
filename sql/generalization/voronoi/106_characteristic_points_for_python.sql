-- Characteristic points for clustering, in a deterministic order (the clustering visits
-- points in input order; points at one position go to one cluster whatever their order),
-- read into Arrow by anonymizers/db/arrow_reads.py. Identifiers: work.
SELECT person, x, y FROM {work}.characteristic_points ORDER BY x, y, person
