-- anonymizers compare, 2/4 (after the COPY): the true answer of every range query, and the
-- query as a space-time box (span: the diagonal from its lower to its upper corner, time
-- as seconds since the window start) for the footprint's n-D index (035).
-- Params: window_start.
UPDATE compare_queries AS q
SET truth = (SELECT count(DISTINCT f.user_id) FROM compare_fixes AS f
             WHERE f.xy && q.box AND f.t >= q.t_start AND f.t < q.t_end),
    span = ST_MakeLine(
        ST_MakePoint(ST_XMin(q.box), ST_YMin(q.box),
                     extract(epoch FROM q.t_start - %(window_start)s::timestamptz)),
        ST_MakePoint(ST_XMax(q.box), ST_YMax(q.box),
                     extract(epoch FROM q.t_end - %(window_start)s::timestamptz)));
CREATE INDEX ON compare_queries USING gist (box);
ANALYZE compare_queries;
