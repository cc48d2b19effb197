-- The withheld region of a MOB release (positions outside every QID with outside_qids
-- 'withheld', or 'hiding_set' where too few of a hiding set are present): the inclusive
-- cell ranges of the lattice rectangle holding the CRS's area of use. It depends on the
-- CRS only, never on the data (privacy rule 2), and holds every position the preparation
-- derives (it reads only fixes inside those lon/lat bounds). The bounds are densified
-- (0.1 degree) before projecting, so the curved edges of the projected area lie inside.
-- Params: srid, lon_min, lon_max, lat_min, lat_max, cell_size (metres).
SELECT floor(ST_XMin(b) / %(cell_size)s)::bigint AS x0,
       floor(ST_YMin(b) / %(cell_size)s)::bigint AS y0,
       (ceil(ST_XMax(b) / %(cell_size)s) - 1)::bigint AS x1,
       (ceil(ST_YMax(b) / %(cell_size)s) - 1)::bigint AS y1
FROM (SELECT box2d(ST_Transform(ST_Segmentize(
          ST_MakeEnvelope(%(lon_min)s, %(lat_min)s, %(lon_max)s, %(lat_max)s, 4326), 0.1),
          %(srid)s)) AS b) AS area;
