-- Counts of a generalization release, in and out (displacement is computed in Python, see
-- anonymizers/pipeline/release_metrics.py). Privacy rule 3: a count about a part of the
-- window (the suppressed trajectories, the fixes outside the CRS's area) is published only
-- when that part holds at least k persons (or is empty), else NULL; the last pass
-- (095_interval_filter_counts.sql) then suppresses every count in 1 .. k - 1 and
-- interval-filters the rest.
-- Params: the window (dataset_id, window_start, window_end, lon_min, lon_max, lat_min,
-- lat_max), for the fixes left out as outside the CRS's area of use; k.
-- Reads {work}.input_trajectories (057_input_trajectories.sql, or progressive
-- generalization's). Identifiers: work, build.
INSERT INTO {build}.metrics (name, value, unit, description)
WITH published_sources AS (
    SELECT DISTINCT a.source_traj_id, o.user_id
    FROM {work}.anonymized AS a
    JOIN {work}.input_trajectories AS o ON o.traj_id = a.source_traj_id
), suppressed AS (
    SELECT count(*) AS n, count(DISTINCT user_id) AS persons
    FROM {work}.input_trajectories AS t
    WHERE NOT EXISTS (SELECT 1 FROM {work}.anonymized AS a WHERE a.source_traj_id = t.traj_id)
), outside AS (
    -- The same fixes 010_project_window.sql leaves out of work.points.
    SELECT count(*) AS n, count(DISTINCT user_id) AS persons
    FROM raw.points
    WHERE dataset_id = %(dataset_id)s AND t >= %(window_start)s AND t < %(window_end)s
      AND NOT (lon BETWEEN %(lon_min)s AND %(lon_max)s AND lat BETWEEN %(lat_min)s AND %(lat_max)s)
)
SELECT * FROM (VALUES
    ('trajectories_in', (SELECT count(*) FROM {work}.input_trajectories)::float8, 'count',
     'Trajectories in the window'),
    ('trajectories_out', (SELECT count(*) FROM {build}.trajectories)::float8, 'count',
     'Published trajectories'),
    ('trajectories_suppressed',
     (SELECT CASE WHEN n = 0 OR persons >= %(k)s THEN n END FROM suppressed)::float8, 'count',
     'Input trajectories of which nothing is published (NULL when they belong to fewer than k persons)'),
    ('persons_in', (SELECT count(DISTINCT user_id) FROM {work}.input_trajectories)::float8, 'count',
     'Distinct persons in the window'),
    ('persons_out', (SELECT count(DISTINCT user_id) FROM published_sources)::float8, 'count',
     'Distinct persons with at least one published trajectory'),
    ('points_in', (SELECT coalesce(sum(n_points), 0) FROM {work}.input_trajectories)::float8, 'count', 'GPS fixes in the window'),
    ('points_outside_area',
     (SELECT CASE WHEN n = 0 OR persons >= %(k)s THEN n END FROM outside)::float8, 'count',
     'Fixes of the window outside the area the release CRS covers (far-away GPS noise); NULL when they belong to fewer than k persons'),
    ('cell_visits_in', (SELECT count(*) FROM {work}.visits)::float8, 'count',
     'Cell visits of all generalized input trajectories'),
    ('cell_visits_out', (SELECT coalesce(sum(n_cells), 0) FROM {build}.trajectories)::float8,
     'count', 'Cell visits of the published trajectories'),
    ('cells_visited', (SELECT count(*) FROM {work}.cells)::float8, 'count',
     'Cells visited by the input in the window'),
    ('cells_published', (SELECT count(*) FROM {build}.cells)::float8, 'count',
     'Cells published (used by a published trajectory or flow)'),
    ('flows_published', (SELECT count(*) FROM {build}.flows)::float8, 'count',
     'Cell-to-cell flows with at least k supporters')
) AS m(name, value, unit, description);
