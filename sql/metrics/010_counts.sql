-- Counts of a generalization release, in and out (moved from generalization/090_metrics.sql;
-- displacement is now computed in Python, see anonymizers/pipeline/release_metrics.py).
-- Params: the window (dataset_id, window_start, window_end), for the fixes left out as
-- outside the CRS's area of use. Identifiers: work, build.
INSERT INTO {build}.metrics (name, value, unit, description)
WITH published_sources AS (
    SELECT DISTINCT a.source_traj_id, v.user_id
    FROM {work}.anonymized AS a
    JOIN (SELECT DISTINCT traj_id, user_id FROM {work}.visits) AS v
      ON v.traj_id = a.source_traj_id
)
SELECT * FROM (VALUES
    ('trajectories_in', (SELECT count(DISTINCT traj_id) FROM {work}.points)::float8, 'count',
     'Trajectories in the window'),
    ('trajectories_out', (SELECT count(*) FROM {build}.trajectories)::float8, 'count',
     'Published trajectories'),
    ('trajectories_suppressed',
     (SELECT count(DISTINCT traj_id) FROM {work}.points)
     - (SELECT count(DISTINCT source_traj_id) FROM {work}.anonymized)::float8, 'count',
     'Input trajectories of which nothing is published'),
    ('persons_in', (SELECT count(DISTINCT user_id) FROM {work}.points)::float8, 'count',
     'Distinct persons in the window'),
    ('persons_out', (SELECT count(DISTINCT user_id) FROM published_sources)::float8, 'count',
     'Distinct persons with at least one published trajectory'),
    ('points_in', (SELECT count(*) FROM {work}.points)::float8, 'count', 'GPS fixes in the window'),
    ('points_outside_area',
     ((SELECT count(*) FROM raw.points WHERE dataset_id = %(dataset_id)s
       AND t >= %(window_start)s AND t < %(window_end)s)
      - (SELECT count(*) FROM {work}.points))::float8, 'count',
     'Fixes of the window outside the area the release CRS covers (far-away GPS noise)'),
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
