-- Differencing attack, clustering family (TCAA, MLA): a group is keyed by its generalized
-- trajectory, the exact sequence of (time interval, region) it publishes; groups of one
-- release with the same trajectory are one item (an attacker cannot tell them apart), their
-- counts added. n_persons is the lower end of an interval of count_interval persons.
-- Columns as generalization/attacks/differencing.sql. No trailing semicolon: a subquery.
-- Identifiers: release.
WITH trajectories AS (
    SELECT r.group_id,
           string_agg(extract(epoch FROM r.t_start)::text || '-'
                      || extract(epoch FROM r.t_end)::text || ':'
                      || encode(ST_AsEWKB(r.geom), 'hex'), '|' ORDER BY r.seq) AS item_key,
           count(*) AS n_regions,
           min(r.t_start) AS first_start,
           (array_agg(Box2D(r.geom)::text ORDER BY r.seq))[1] AS first_box
    FROM {release}.group_regions AS r
    GROUP BY r.group_id
)
SELECT 'group_persons'::text AS kind,
       t.item_key,
       format('group of %s regions from %s in %s', min(t.n_regions), min(t.first_start),
              min(t.first_box)) AS label,
       sum(g.n_persons)::bigint AS n_lo,
       sum(g.n_persons + m.count_interval - 1)::bigint AS n_hi
FROM {release}.groups AS g
JOIN trajectories AS t USING (group_id)
CROSS JOIN {release}.manifest AS m
WHERE g.n_persons IS NOT NULL
GROUP BY t.item_key
