-- Characteristic points for clustering, in a deterministic order (the clustering visits
-- points in input order; points at one position go to one cluster whatever their order).
-- Identifiers: work.
COPY (
    SELECT person, x, y FROM {work}.characteristic_points ORDER BY x, y, person
) TO STDOUT (FORMAT csv)
