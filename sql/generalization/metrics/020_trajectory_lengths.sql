-- Trajectory length distribution before and after anonymization, as histograms over FIXED
-- bins (privacy rule 3: no quantile, minimum or maximum of individual lengths, which are
-- single persons' values; the bins do not depend on the data). The length of an input
-- trajectory is the sum of the segments between its fixes in time order; that of a
-- published one the line through its cells' centroids (0 for one cell). Each bin counts
-- the distinct persons with a trajectory of that length and is published only when they
-- are at least k: an empty bin and a bin of 1 .. k - 1 persons are both NULL, so a lonely
-- outlier cannot even be told from an empty bin. Also the averages (over every trajectory
-- of a window of at least k persons; summed as numeric, which does not depend on the order
-- rows come in, so that a re-run publishes the same digits).
-- Params: edges (float8[], increasing, first 0: the lower edge of each bin; the last bin is
-- open), k. Reads {work}.input_trajectories (057_input_trajectories.sql, or progressive
-- generalization's). Identifiers: work, build.
-- The published trajectories find their line's length by their cells through a hash, not
-- by sorting 1.9 million arrays of cells for a merge join (25M fixes: 18.6 -> 15.0 s,
-- EXPLAIN ANALYZE); the setting is reset at the end of the file.
SET LOCAL enable_mergejoin = off;
INSERT INTO {build}.metric_series (series, x, value, unit, description)
WITH owners AS (
    SELECT traj_id, user_id FROM {work}.input_trajectories
), original AS (
    SELECT user_id, len FROM {work}.input_trajectories
), pattern_lengths AS MATERIALIZED (
    -- The lines of build.trajectories (generalization/080_build_release.sql), once per
    -- distinct published sequence: the line depends on the cells only. Each sequence's line
    -- is made in a subquery of its own, so that no sort runs over all of them (25M fixes:
    -- 238,475 distinct sequences for 1.9 million published trajectories; a line per
    -- trajectory took 23.7 s for the statement, a sort of every sequence's cells by the
    -- sequence 15 s). Materialized: inlined, the lines were made once per trajectory.
    SELECT d.cells,
           (SELECT CASE WHEN count(*) >= 2
                        THEN ST_Length(ST_MakeLine(c.centroid ORDER BY u.ord)) ELSE 0 END
            FROM unnest(d.cells) WITH ORDINALITY AS u(cell_id, ord)
            JOIN {work}.cells AS c ON c.cell_id = u.cell_id) AS len
    FROM (SELECT DISTINCT cells FROM {work}.anonymized) AS d
), published AS (
    -- With the person each comes from (known to the work schema only).
    SELECT o.user_id, l.len
    FROM {work}.anonymized AS a
    JOIN pattern_lengths AS l ON l.cells = a.cells
    JOIN owners AS o ON o.traj_id = a.source_traj_id
), lengths AS (
    SELECT 'original' AS side, user_id, len FROM original
    UNION ALL
    SELECT 'published', user_id, len FROM published
), binned AS (
    SELECT side, width_bucket(len, %(edges)s::float8[]) AS bin,
           count(DISTINCT user_id) AS persons
    FROM lengths
    GROUP BY 1, 2
), bins AS (
    SELECT s.side, s.what, e.edge, e.bin
    FROM (VALUES ('original', 'Input trajectories (length: the sum of the segments between consecutive fixes)'),
                 ('published', 'Published trajectories (length: the line through their cell centroids, 0 for one cell)'))
         AS s(side, what)
    CROSS JOIN unnest(%(edges)s::float8[]) WITH ORDINALITY AS e(edge, bin)
)
SELECT 'length_histogram.' || b.side, b.edge,
       CASE WHEN n.persons >= %(k)s THEN n.persons END::float8, 'count',
       b.what || ': distinct persons with a trajectory whose length in metres lies in the '
       || 'fixed bin [x, next x) (the last bin is open); NULL when fewer than k persons '
       || '(possibly none), so that no single length shows'
FROM bins AS b
LEFT JOIN binned AS n ON n.side = b.side AND n.bin = b.bin;

INSERT INTO {build}.metrics (name, value, unit, description)
SELECT * FROM (VALUES
    ('length_original_avg_m',
     (SELECT avg(len::numeric) FROM {work}.input_trajectories)::float8, 'm',
     'Average length of the input trajectories (sum of the segments between their fixes)'),
    ('length_published_avg_m',
     (SELECT avg(coalesce(ST_Length(geom), 0)::numeric) FROM {build}.trajectories)::float8, 'm',
     'Average length of the published trajectories (line through the cell centroids; 0 for one cell)')
) AS m(name, value, unit, description);
RESET enable_mergejoin;
