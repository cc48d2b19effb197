-- Aggregates: exact counts for the manifest (the machinery interval-filters the input
-- ones): the window's trajectories, persons and fixes inside the CRS's area of use (the
-- window as every GPS family reads it, whatever the zones cover: the ledger's window
-- counts then match across families), the published cells, and the persons of the window
-- counted in no published cell.
-- Params: the window (dataset_id, window_start, window_end, lon_min, lon_max, lat_min,
-- lat_max). Identifiers: work, build.
WITH fixes AS (
    SELECT traj_id, user_id
    FROM raw.points
    WHERE dataset_id = %(dataset_id)s
      AND t >= %(window_start)s AND t < %(window_end)s
      AND lon BETWEEN %(lon_min)s AND %(lon_max)s
      AND lat BETWEEN %(lat_min)s AND %(lat_max)s
)
SELECT (SELECT count(DISTINCT traj_id) FROM fixes) AS trajectories_in,
       (SELECT count(DISTINCT user_id) FROM fixes) AS persons_in,
       (SELECT count(*) FROM fixes) AS points_in,
       (SELECT count(*) FROM {build}.presence_counts)
         + (SELECT count(*) FROM {build}.od_counts) AS published,
       (SELECT count(DISTINCT user_id) FROM fixes)
         - (SELECT count(DISTINCT m.user_id)
            FROM {work}.ag_cell_members AS m
            JOIN {work}.ag_published_cells USING (cell_index)) AS suppressed;
