-- Differencing attack, every family: the manifest's interval-filtered counts of the
-- window's input (persons and trajectories). What they count is the family's reading of
-- the window, named by the caller as {scope} (e.g. the fixes of the window inside the
-- CRS's area of use, for a given SRID): the same scope is the same count in two releases.
-- A count of 0 is exact; NULL (below k) is no item. Columns as
-- generalization/attacks/differencing.sql. No trailing semicolon: a subquery.
-- Identifiers: release; literal: scope.
SELECT c.kind, {scope}::text AS item_key, c.label,
       c.n AS n_lo,
       CASE WHEN c.n = 0 THEN 0 ELSE c.n + m.count_interval - 1 END::bigint AS n_hi
FROM {release}.manifest AS m
CROSS JOIN LATERAL (VALUES ('window_persons', 'persons in the window', m.persons_in),
                           ('window_trajectories', 'trajectories in the window',
                            m.trajectories_in)) AS c(kind, label, n)
WHERE c.n IS NOT NULL
