-- Trajectory length distribution before and after anonymization: the length of every input
-- trajectory (sum of the segments between its fixes, in time order) and of every published
-- trajectory (its line through the cell centroids; a one-cell trajectory has no line and
-- length 0), at the quantiles given (1.0 = the longest). Also the averages.
-- Params: quantiles (float8[], increasing, in (0, 1]). Identifiers: work, build.
INSERT INTO {build}.metric_series (series, x, value, unit, description)
WITH original AS (
    -- ST_MakeLine of a single fix has no length: coalesce covers a NULL line too.
    SELECT coalesce(ST_Length(ST_MakeLine(geom ORDER BY t)), 0) AS len
    FROM {work}.points
    GROUP BY traj_id
), published AS (
    SELECT coalesce(ST_Length(geom), 0) AS len FROM {build}.trajectories
), quantiles AS (
    SELECT 'length.original_m' AS series,
           percentile_cont(%(quantiles)s::float8[]) WITHIN GROUP (ORDER BY len) AS q,
           'Length of the input trajectories (sum of the segments between consecutive fixes) at quantile x (continuous percentile; x = 1 is the longest)' AS description
    FROM original
    UNION ALL
    SELECT 'length.published_m',
           percentile_cont(%(quantiles)s::float8[]) WITHIN GROUP (ORDER BY len),
           'Length of the published trajectories (line through their cell centroids; 0 for one cell) at quantile x (continuous percentile; x = 1 is the longest)'
    FROM published
)
SELECT q.series, u.x, u.value, 'm', q.description
FROM quantiles AS q
CROSS JOIN LATERAL unnest(%(quantiles)s::float8[], q.q) AS u(x, value);

INSERT INTO {build}.metrics (name, value, unit, description)
SELECT * FROM (VALUES
    ('length_original_avg_m',
     (SELECT avg(len) FROM (SELECT coalesce(ST_Length(ST_MakeLine(geom ORDER BY t)), 0) AS len
                            FROM {work}.points GROUP BY traj_id) AS o)::float8, 'm',
     'Average length of the input trajectories (sum of the segments between their fixes)'),
    ('length_published_avg_m',
     (SELECT avg(coalesce(ST_Length(geom), 0)) FROM {build}.trajectories)::float8, 'm',
     'Average length of the published trajectories (line through the cell centroids; 0 for one cell)')
) AS m(name, value, unit, description);
