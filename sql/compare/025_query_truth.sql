-- anonymizers compare, 2/4 (after the COPY): the true answer of every range query.
UPDATE compare_queries AS q
SET truth = (SELECT count(DISTINCT f.user_id) FROM compare_fixes AS f
             WHERE f.xy && q.box AND f.t >= q.t_start AND f.t < q.t_end);
CREATE INDEX ON compare_queries USING gist (box);
ANALYZE compare_queries;
