-- Differencing attack, groups family (seed 004): a trajectory group is keyed by its places
-- in order, each place by its public name and exact geometry (a grid's 'column:row' names
-- another square at another cell size); a common origin/destination group by its group,
-- its kind and its places. Counts are trajectories, published as the inclusive interval
-- [n_lo, n_hi]. Columns as generalization/attacks/differencing.sql. No trailing semicolon: a
-- subquery. Identifiers: release.
WITH place_keys AS (
    SELECT place_id, place_id || '=' || encode(ST_AsEWKB(geom), 'hex') AS place_key
    FROM {release}.places
), group_keys AS (
    SELECT g.group_id, g.places, g.n_lo, g.n_hi,
           string_agg(pk.place_key, '|' ORDER BY u.ord) AS item_key
    FROM {release}.groups AS g
    CROSS JOIN LATERAL unnest(g.places) WITH ORDINALITY AS u(place_id, ord)
    JOIN place_keys AS pk ON pk.place_id = u.place_id
    GROUP BY g.group_id, g.places, g.n_lo, g.n_hi
)
SELECT 'group_trajectories'::text AS kind, gk.item_key,
       'places ' || array_to_string(gk.places, ' > ') AS label,
       gk.n_lo::bigint AS n_lo, gk.n_hi::bigint AS n_hi
FROM group_keys AS gk
UNION ALL
SELECT 'od_group_trajectories', gk.item_key || '#' || o.kind || '#' || odk.item_key,
       format('%s of places %s: %s', o.kind, array_to_string(gk.places, ' > '),
              array_to_string(o.places, ', ')),
       o.n_lo::bigint, o.n_hi::bigint
FROM {release}.od_groups AS o
JOIN group_keys AS gk USING (group_id)
CROSS JOIN LATERAL (SELECT string_agg(pk.place_key, '|' ORDER BY pk.place_key) AS item_key
                    FROM unnest(o.places) AS u(place_id)
                    JOIN place_keys AS pk ON pk.place_id = u.place_id) AS odk
