-- MOB (seed 003): every published position of every object, for `anonymizers compare`. An
-- object is one person; its region at time point t stands for the last fix at or before t
-- (020_positions.sql), so for the span (t - interval, t] of the manifest's interval. A
-- withheld position (the region holding the CRS's whole area of use: 055_area_of_use_cells)
-- is no location and is left out: it would "possibly" meet every range query and "cover"
-- every fix of the window.
-- Params: srid, lon_min, lon_max, lat_min, lat_max (the area of use). Identifiers: release.
SELECT p.object_id::text AS unit,
       (row_number() OVER (PARTITION BY p.object_id ORDER BY p.t))::integer AS seq,
       1::float8 AS n_persons, p.geom,
       p.t - make_interval(secs => (m.parameters ->> 'interval')::float8)
           + interval '1 microsecond' AS t_start,
       p.t + interval '1 microsecond' AS t_end
FROM {release}.positions AS p
CROSS JOIN {release}.manifest AS m
CROSS JOIN (SELECT box2d(ST_Transform(ST_Segmentize(
                ST_MakeEnvelope(%(lon_min)s, %(lat_min)s, %(lon_max)s, %(lat_max)s, 4326),
                0.1), %(srid)s))::geometry AS area) AS area_of_use
WHERE NOT ST_Covers(p.geom, ST_SetSRID(area_of_use.area, ST_SRID(p.geom)));
