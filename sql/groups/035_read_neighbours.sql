-- Trajectory groups (seed 004): neighbouring places (one route apart, §4.3.3), each pair
-- once or twice (the anonymizer treats them as undirected). Identifiers: work.
COPY (SELECT a, b FROM {work}.tg_neighbours ORDER BY a, b) TO STDOUT (FORMAT csv)
