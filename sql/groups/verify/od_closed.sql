-- Verifier of trajectory groups (seed 004): per published origin / destination group
-- (§4.3.3), whether its trajectory group is published and whether its places are a closed
-- neighbourhood N[c] (c and all its neighbours in tgv_neighbours) for one of its places c,
-- compared as sets. Also its kind and count interval.
-- Identifiers: od_groups, groups (the tables under test).
WITH od AS (
    SELECT o.od_group_id, o.group_id, o.kind, o.n_lo, o.n_hi,
           ARRAY(SELECT DISTINCT u FROM unnest(o.places) AS u ORDER BY u) AS places
    FROM {od_groups} AS o
), hoods AS (
    SELECT o.od_group_id,
           ARRAY(SELECT c.place UNION SELECT n.b FROM tgv_neighbours AS n WHERE n.a = c.place
                 ORDER BY 1) AS hood
    FROM od AS o
    CROSS JOIN LATERAL unnest(o.places) AS c(place)
)
SELECT o.od_group_id, o.group_id, o.kind, o.n_lo, o.n_hi,
       EXISTS (SELECT 1 FROM {groups} AS g WHERE g.group_id = o.group_id) AS group_known,
       EXISTS (SELECT 1 FROM hoods AS h
               WHERE h.od_group_id = o.od_group_id AND h.hood = o.places) AS closed
FROM od AS o
ORDER BY o.od_group_id;
