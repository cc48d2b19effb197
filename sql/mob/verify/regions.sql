-- The published regions of a MOB release as integer cell rectangles, one row per row of
-- positions, with what is wrong with it (seed 003: a region is a rectangle of whole grid
-- cells, ST_MakeEnvelope on multiples of cell_size, in the release's SRID, at a time point
-- window_start + i * interval_s inside the window, of a published object).
-- Columns (a CSV with a header, read by name): object number n (object_id order, as
-- objects.sql; -1 for an unknown object), time point i (floor), the inclusive cell ranges x0..x1, y0..y1 of the smallest lattice
-- rectangle holding the region's bounding box (edges within 1e-6 m of the lattice count
-- as on it), and fault bits: 1 unknown object, 2 no region, 4 off the time grid or outside
-- the window, 8 another SRID, 16 not an axis-parallel rectangle, 32 edges off the cell
-- lattice. A quadrilateral with the area of its bounding box is that box. Repeated
-- (object, time point) rows are counted by the verifier. One pass over positions.
-- Params: cell_size, srid, window_start, window_end, interval_s.
-- Identifiers: objects, positions (schema, table each).
COPY (
    WITH numbered AS (
        SELECT object_id, (row_number() OVER (ORDER BY object_id) - 1)::integer AS n
        FROM {objects}
    ), measured AS (
        -- OFFSET 0 keeps each function to one call per row (else inlined in every use).
        SELECT coalesce(o.n, -1) AS n, p.t,
               p.geom IS NULL OR ST_IsEmpty(p.geom) AS empty,
               extract(epoch FROM p.t - %(window_start)s::timestamptz)
                   / %(interval_s)s::numeric AS at,
               ST_XMin(b) AS xmin, ST_YMin(b) AS ymin, ST_XMax(b) AS xmax, ST_YMax(b) AS ymax,
               ST_SRID(p.geom) AS srid, GeometryType(p.geom) AS kind,
               ST_NPoints(p.geom) AS n_points, ST_NumInteriorRings(p.geom) AS holes,
               ST_Area(p.geom) AS area
        FROM {positions} AS p
        LEFT JOIN numbered AS o USING (object_id)
        CROSS JOIN LATERAL (SELECT box2d(p.geom) AS b) AS bounds
        OFFSET 0
    )
    SELECT n,
           coalesce(floor(at)::integer, -1) AS i,
           coalesce(floor((xmin + 1e-6) / %(cell_size)s)::bigint, 0) AS x0,
           coalesce(floor((ymin + 1e-6) / %(cell_size)s)::bigint, 0) AS y0,
           coalesce(ceil((xmax - 1e-6) / %(cell_size)s)::bigint - 1, 0) AS x1,
           coalesce(ceil((ymax - 1e-6) / %(cell_size)s)::bigint - 1, 0) AS y1,
           (CASE WHEN n < 0 THEN 1 ELSE 0 END)
           | (CASE WHEN empty THEN 2 ELSE 0 END)
           | (CASE WHEN t IS NULL OR t < %(window_start)s OR t >= %(window_end)s
                        OR at <> floor(at) THEN 4 ELSE 0 END)
           | (CASE WHEN NOT empty AND srid <> %(srid)s THEN 8 ELSE 0 END)
           | (CASE WHEN NOT empty AND (kind <> 'POLYGON' OR n_points <> 5 OR holes <> 0
                                       OR xmax <= xmin OR ymax <= ymin
                                       OR abs(area - (xmax - xmin) * (ymax - ymin))
                                          > 1e-6 * (xmax - xmin) * (ymax - ymin))
                   THEN 16 ELSE 0 END)
           | (CASE WHEN NOT empty
                        AND greatest(abs(xmin - %(cell_size)s * round(xmin / %(cell_size)s)),
                                     abs(ymin - %(cell_size)s * round(ymin / %(cell_size)s)),
                                     abs(xmax - %(cell_size)s * round(xmax / %(cell_size)s)),
                                     abs(ymax - %(cell_size)s * round(ymax / %(cell_size)s)))
                            > 1e-6
                   THEN 32 ELSE 0 END) AS faults
    FROM measured
) TO STDOUT (FORMAT csv, HEADER)
