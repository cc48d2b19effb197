-- anonymizers compare, 4/4: the headline utility of one release, from its footprint (the
-- temporary table compare_footprint: every published location of every published unit,
-- Family.footprint) against the window's fixes, queries and flows. One row:
--   fixes, covered     fixes of the window's sample / those inside a published location at
--                      a time it stands for (a location without time: the whole window)
--   locations, area    published locations / their mean area in m² (0 for points)
--   possibly_error     mean |estimate - truth| / truth over the span queries with truth > 0, the
--                      estimate summing n_persons over the units with a location that
--                      intersects the box at an overlapping time (seed 003 §6.3)
--   definitely_error   the same with units having a location inside the box and its time
--                      inside the query's
--   window_error       possibly_error of the same boxes asked over the whole window
--   flow_preservation  weighted Jaccard sum(min) / sum(max) of the raw and the published
--                      flows on the lattice (a unit's consecutive locations, by the
--                      square of their centroid, weighted by its n_persons)
-- Params: x0, y0, side.
WITH covered AS (
    SELECT count(*) AS fixes,
           count(*) FILTER (WHERE EXISTS (
               SELECT FROM compare_footprint AS l
               WHERE l.span &&& f.xyt AND ST_Intersects(l.geom, f.xy)
                 AND (l.t_start IS NULL OR (f.t >= l.t_start AND f.t < l.t_end)))) AS covered
    FROM compare_fixes AS f
    WHERE f.sampled
), queries AS MATERIALIZED (
    SELECT q.*, ST_XMin(q.box) AS x0, ST_YMin(q.box) AS y0, ST_XMax(q.box) AS x1,
           ST_YMax(q.box) AS y1
    FROM compare_queries AS q
    WHERE q.truth > 0
), estimates AS (
    -- A box location (is_box, 035) meets or lies in the query box by its bounds alone.
    SELECT q.query_id, q.truth, q.whole_window,
           (SELECT coalesce(sum(u.n_persons), 0) FROM (
                SELECT DISTINCT l.unit, l.n_persons FROM compare_footprint AS l
                WHERE l.span &&& q.span
                  AND CASE WHEN l.is_box THEN l.x0 <= q.x1 AND l.x1 >= q.x0
                                              AND l.y0 <= q.y1 AND l.y1 >= q.y0
                           ELSE ST_Intersects(l.geom, q.box) END
                  AND (l.t_start IS NULL OR (l.t_start < q.t_end AND l.t_end > q.t_start))
            ) AS u) AS possibly,
           (SELECT coalesce(sum(u.n_persons), 0) FROM (
                SELECT DISTINCT l.unit, l.n_persons FROM compare_footprint AS l
                WHERE l.span &&& q.span
                  AND CASE WHEN l.is_box THEN l.x0 >= q.x0 AND l.x1 <= q.x1
                                              AND l.y0 >= q.y0 AND l.y1 <= q.y1
                           ELSE ST_CoveredBy(l.geom, q.box) END
                  AND (l.t_start IS NULL
                       OR (l.t_start >= q.t_start AND l.t_end <= q.t_end))
            ) AS u) AS definitely
    FROM queries AS q
), squares AS (
    SELECT unit, seq, n_persons,
           floor((ST_X(c) - %(x0)s::float8) / %(side)s::float8)::integer AS cx,
           floor((ST_Y(c) - %(y0)s::float8) / %(side)s::float8)::integer AS cy
    FROM compare_footprint CROSS JOIN LATERAL ST_Centroid(geom) AS c
), moves AS (
    SELECT unit, n_persons, cx, cy,
           lag(cx) OVER w AS px, lag(cy) OVER w AS py
    FROM squares
    WINDOW w AS (PARTITION BY unit ORDER BY seq)
), published_flows AS (
    SELECT px, py, cx, cy, sum(n_persons) AS n
    FROM (SELECT DISTINCT unit, n_persons, px, py, cx, cy FROM moves
          WHERE px IS NOT NULL AND (px, py) <> (cx, cy)) AS per_unit
    GROUP BY px, py, cx, cy
), flows AS (
    SELECT sum(least(coalesce(r.n, 0), coalesce(p.n, 0))) AS shared,
           sum(greatest(coalesce(r.n, 0), coalesce(p.n, 0))) AS either
    FROM compare_raw_flows AS r
    FULL JOIN published_flows AS p USING (px, py, cx, cy)
)
SELECT c.fixes, c.covered,
       (SELECT count(*) FROM compare_footprint) AS locations,
       (SELECT avg(ST_Area(geom)) FROM compare_footprint) AS area,
       (SELECT count(*) FROM estimates WHERE NOT whole_window) AS queries,
       (SELECT avg(abs(possibly - truth) / truth) FROM estimates WHERE NOT whole_window)
           AS possibly_error,
       (SELECT avg(abs(definitely - truth) / truth) FROM estimates WHERE NOT whole_window)
           AS definitely_error,
       (SELECT avg(abs(possibly - truth) / truth) FROM estimates WHERE whole_window)
           AS window_error,
       (SELECT shared / nullif(either, 0) FROM flows) AS flow_preservation
FROM covered AS c;
