-- Characteristic points for clustering, in a deterministic order (the clustering visits
-- points in input order). Identifiers: work.
COPY (
    SELECT user_id, x, y FROM {work}.characteristic_points ORDER BY x, y, user_id
) TO STDOUT (FORMAT csv)
