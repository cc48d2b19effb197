-- Aggregates: the window's fixes on the zones of a fixed square grid of cell_size metres in
-- the release's metric CRS, anchored at its origin (a lattice that does not follow the data,
-- privacy rule 2). A fix is in the zone that holds it (zones are half-open, [x0, x0 + size)
-- x [y0, y0 + size)); zone_key is 'column:row', zone_rank orders zones by column, then row
-- (the dominant zone's tie-break). Only fixes inside the CRS's area of use are mapped.
-- bin: the fix's time bin, whole bin_seconds from the window start (the trailing part of
-- the window, shorter than a bin, gets the bin number n_bins and is counted in no cell).
-- Params: dataset_id, window_start, window_end, bin_seconds, srid, cell_size, lon_min,
-- lon_max, lat_min, lat_max. Identifiers: work.
DROP TABLE IF EXISTS {work}.ag_fixes, {work}.ag_zones;
CREATE TABLE {work}.ag_fixes AS
SELECT p.traj_id, p.user_id,
       floor(extract(epoch FROM p.t - %(window_start)s::timestamptz)
             / %(bin_seconds)s::float8)::integer AS bin,
       floor(ST_X(xy) / %(cell_size)s::float8)::bigint || ':'
       || floor(ST_Y(xy) / %(cell_size)s::float8)::bigint AS zone_key
FROM raw.points AS p
CROSS JOIN LATERAL ST_Transform(p.geom, %(srid)s) AS xy
WHERE p.dataset_id = %(dataset_id)s
  AND p.t >= %(window_start)s::timestamptz
  AND p.t < %(window_end)s::timestamptz
  AND p.lon BETWEEN %(lon_min)s AND %(lon_max)s
  AND p.lat BETWEEN %(lat_min)s AND %(lat_max)s;

-- The visited zones: each a square of the lattice, its centroid the square's centre.
CREATE TABLE {work}.ag_zones AS
WITH visited AS (
    SELECT DISTINCT zone_key, split_part(zone_key, ':', 1)::bigint AS col,
                    split_part(zone_key, ':', 2)::bigint AS row
    FROM {work}.ag_fixes
)
SELECT v.zone_key, dense_rank() OVER (ORDER BY v.col, v.row) AS zone_rank,
       ST_MakeEnvelope(v.col * %(cell_size)s::float8, v.row * %(cell_size)s::float8,
                       (v.col + 1) * %(cell_size)s::float8, (v.row + 1) * %(cell_size)s::float8,
                       %(srid)s) AS geom,
       ST_SetSRID(ST_MakePoint((v.col + 0.5) * %(cell_size)s::float8,
                               (v.row + 0.5) * %(cell_size)s::float8), %(srid)s) AS centroid
FROM visited AS v;
ALTER TABLE {work}.ag_zones ADD PRIMARY KEY (zone_key);
