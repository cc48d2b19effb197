-- Differencing attack, groups family (seed 004): a trajectory group is keyed by its places
-- in order, each place by its public name and exact geometry (a grid's 'column:row' names
-- another square at another cell size); a common origin/destination group by its group,
-- its kind and its places. Counts are trajectories, published as the inclusive interval
-- [n_lo, n_hi]. Columns as generalization/attacks/differencing.sql. No trailing semicolon: a
-- subquery. Places are JSON arrays of place names. Identifiers: release.
WITH place_keys AS (
    SELECT place_id, place_id || '=' || encode(ST_AsEWKB(geom), 'hex') AS place_key
    FROM {release}.places
), group_keys AS (
    SELECT g.group_id, string_agg(u.place_id, ' > ' ORDER BY u.ord) AS sequence,
           g.n_lo, g.n_hi, string_agg(pk.place_key, '|' ORDER BY u.ord) AS item_key
    FROM {release}.groups AS g
    CROSS JOIN LATERAL jsonb_array_elements_text(g.places) WITH ORDINALITY AS u(place_id, ord)
    JOIN place_keys AS pk ON pk.place_id = u.place_id
    GROUP BY g.group_id, g.n_lo, g.n_hi
)
SELECT 'group_trajectories'::text AS kind, gk.item_key,
       'places ' || gk.sequence AS label,
       gk.n_lo::bigint AS n_lo, gk.n_hi::bigint AS n_hi
FROM group_keys AS gk
UNION ALL
SELECT 'od_group_trajectories', gk.item_key || '#' || o.kind || '#' || odk.item_key,
       format('%s of places %s: %s', o.kind, gk.sequence,
              (SELECT string_agg(e, ', ' ORDER BY i)
               FROM jsonb_array_elements_text(o.places) WITH ORDINALITY AS u(e, i))),
       o.n_lo::bigint, o.n_hi::bigint
FROM {release}.od_groups AS o
JOIN group_keys AS gk USING (group_id)
CROSS JOIN LATERAL (SELECT string_agg(pk.place_key, '|' ORDER BY pk.place_key) AS item_key
                    FROM jsonb_array_elements_text(o.places) AS u(place_id)
                    JOIN place_keys AS pk ON pk.place_id = u.place_id) AS odk
