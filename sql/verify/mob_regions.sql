-- The published regions of a MOB release as integer cell rectangles: object number (in
-- object_id order, as mob_objects.sql), time point i, and the inclusive cell ranges
-- x0..x1, y0..y1 of the smallest lattice rectangle holding the region's bounding box
-- (edges within 1e-6 m of the lattice count as on it, as in mob_region_faults.sql).
-- mob_region_faults.sql counts the regions that are not exactly such a rectangle at a
-- grid time point. Positions of unknown objects are left out (counted there too).
-- Params: cell_size, window_start, interval_s.
-- Identifiers: objects, positions (schema, table each).
COPY (
    WITH numbered AS (
        SELECT object_id, (row_number() OVER (ORDER BY object_id) - 1)::integer AS n
        FROM {objects}
    )
    SELECT o.n,
           floor(extract(epoch FROM p.t - %(window_start)s::timestamptz)
                 / %(interval_s)s::numeric)::integer AS i,
           floor((ST_XMin(p.geom) + 1e-6) / %(cell_size)s)::bigint AS x0,
           floor((ST_YMin(p.geom) + 1e-6) / %(cell_size)s)::bigint AS y0,
           ceil((ST_XMax(p.geom) - 1e-6) / %(cell_size)s)::bigint - 1 AS x1,
           ceil((ST_YMax(p.geom) - 1e-6) / %(cell_size)s)::bigint - 1 AS y1
    FROM {positions} AS p
    JOIN numbered AS o USING (object_id)
    WHERE p.geom IS NOT NULL AND NOT ST_IsEmpty(p.geom)
) TO STDOUT (FORMAT csv)
