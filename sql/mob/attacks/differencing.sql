-- Differencing attack, MOB family: MOB publishes no count column, but the objects sharing
-- a region at a time point are a count anyone can take: (time point, exact rectangle) is
-- the item, its objects the exact count (n_lo = n_hi). Columns as
-- generalization/attacks/differencing.sql. No trailing semicolon: composed as a subquery.
-- Identifiers: release.
SELECT 'region_objects'::text AS kind,
       encode(ST_AsEWKB(p.geom), 'hex') || '@' || extract(epoch FROM p.t)::text AS item_key,
       format('%s at %s', min(Box2D(p.geom)::text), min(p.t)) AS label,
       count(*)::bigint AS n_lo,
       count(*)::bigint AS n_hi
FROM {release}.positions AS p
GROUP BY 2
