-- What is wrong with the rows of a MOB release's positions table, by kind: a region must
-- be a rectangle of whole grid cells (ST_MakeEnvelope on multiples of cell_size) in the
-- release's SRID, at a time point window_start + i * interval_s inside the window, of a
-- published object, at most once per object and time point. A quadrilateral with the
-- area of its bounding box is that box. Params: cell_size, srid, window_start, window_end,
-- interval_s. Identifiers: objects, positions (schema, table each).
WITH rows AS (
    SELECT p.object_id, p.t, p.geom,
           o.object_id IS NULL AS unknown_object,
           p.geom IS NULL OR ST_IsEmpty(p.geom) AS empty,
           extract(epoch FROM p.t - %(window_start)s::timestamptz)
               / %(interval_s)s::numeric AS at
    FROM {positions} AS p
    LEFT JOIN {objects} AS o USING (object_id)
), judged AS (
    SELECT object_id, t, unknown_object, empty,
           t IS NULL OR t < %(window_start)s OR t >= %(window_end)s OR at <> floor(at)
               AS off_grid,
           NOT empty AND ST_SRID(geom) <> %(srid)s AS wrong_srid,
           NOT empty AND (GeometryType(geom) <> 'POLYGON' OR ST_NPoints(geom) <> 5
                          OR ST_NumInteriorRings(geom) <> 0
                          OR abs(ST_Area(geom) - (ST_XMax(geom) - ST_XMin(geom))
                                 * (ST_YMax(geom) - ST_YMin(geom))) > 1e-6
                          OR ST_XMax(geom) <= ST_XMin(geom)
                          OR ST_YMax(geom) <= ST_YMin(geom)) AS not_rectangle,
           NOT empty AND (
               abs(ST_XMin(geom) - %(cell_size)s * round(ST_XMin(geom) / %(cell_size)s)) > 1e-6
               OR abs(ST_YMin(geom) - %(cell_size)s * round(ST_YMin(geom) / %(cell_size)s)) > 1e-6
               OR abs(ST_XMax(geom) - %(cell_size)s * round(ST_XMax(geom) / %(cell_size)s)) > 1e-6
               OR abs(ST_YMax(geom) - %(cell_size)s * round(ST_YMax(geom) / %(cell_size)s)) > 1e-6
           ) AS off_lattice
    FROM rows
)
SELECT count(*) FILTER (WHERE unknown_object) AS unknown_object,
       count(*) FILTER (WHERE empty) AS empty_region,
       count(*) FILTER (WHERE off_grid) AS off_time_grid,
       count(*) FILTER (WHERE wrong_srid) AS wrong_srid,
       count(*) FILTER (WHERE not_rectangle) AS not_rectangle,
       count(*) FILTER (WHERE off_lattice) AS off_cell_lattice,
       (SELECT count(*) FROM (SELECT 1 FROM {positions}
                              GROUP BY object_id, t HAVING count(*) > 1) AS d)
           AS repeated_object_time
FROM judged;
