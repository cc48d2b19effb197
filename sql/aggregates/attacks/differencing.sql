-- Differencing attack, aggregates family: a cell is keyed by its zones' exact geometry
-- (release zone ids are random; the grid's squares, the places and a release's cells are
-- the same geometry in every release that uses them), its bin's exact times and the scope
-- (zones, zones_release, SRID: which zones compete for a person's fixes, and which fixes
-- are in a zone at all); a bin total by its bin's times, what it counts and the scope; the window total by what it counts, its scope, the bin
-- length and the bins' alignment (the window start modulo the bin length): two releases
-- with aligned bins of one length count the same bins the same way. Counts are persons (moves:
-- one per person), published as the inclusive interval [n_lo, n_hi]. Columns as
-- generalization/attacks/differencing.sql. No trailing semicolon: a subquery.
-- Identifiers: release.
WITH zone_keys AS (
    SELECT z.zone_id, encode(ST_AsEWKB(z.geom), 'hex') AS zone_key,
           ST_AsText(coalesce(c.geom, ST_PointOnSurface(z.geom))) AS zone_label
    FROM {release}.zones AS z
    LEFT JOIN {release}.zone_centroids AS c USING (zone_id)
), bins AS (
    SELECT m.parameters ->> 'bin_seconds' AS bin_seconds,
           mod(extract(epoch FROM m.window_start)::numeric,
               (m.parameters ->> 'bin_seconds')::numeric) AS phase,
           concat_ws(':', m.parameters ->> 'zones', m.parameters ->> 'zones_release',
                     m.srid) AS scope
    FROM {release}.manifest AS m
)
SELECT 'presence_persons'::text AS kind,
       b.scope || '#' || z.zone_key || '@' || c.bin_start || '/' || c.bin_end AS item_key,
       format('persons in zone %s, %s .. %s', z.zone_label, c.bin_start, c.bin_end) AS label,
       c.n_lo::bigint AS n_lo, c.n_hi::bigint AS n_hi
FROM {release}.presence_counts AS c
JOIN zone_keys AS z USING (zone_id)
CROSS JOIN bins AS b
UNION ALL
SELECT 'od_persons', b.scope || '#' || o.zone_key || '>' || d.zone_key || '@' || c.bin_start || '/' || c.bin_end,
       format('moves %s -> %s ending %s .. %s', o.zone_label, d.zone_label, c.bin_start,
              c.bin_end),
       c.n_lo::bigint, c.n_hi::bigint
FROM {release}.od_counts AS c
JOIN zone_keys AS o ON o.zone_id = c.origin_zone_id
JOIN zone_keys AS d ON d.zone_id = c.destination_zone_id
CROSS JOIN bins AS b
UNION ALL
SELECT CASE WHEN t.counted = 'moves' THEN 'bin_moves' ELSE 'bin_persons' END,
       b.scope || '@' || t.bin_start || '/' || t.bin_end,
       format('bin total of %s, %s .. %s', t.counted, t.bin_start, t.bin_end),
       t.n_lo::bigint, t.n_hi::bigint
FROM {release}.bin_totals AS t CROSS JOIN bins AS b
UNION ALL
SELECT CASE WHEN w.counted = 'moves' THEN 'window_moves' ELSE 'window_person_bins' END,
       b.scope || '@' || b.bin_seconds || 's+' || b.phase,
       format('window total of %s s bins', b.bin_seconds),
       w.n_lo::bigint, w.n_hi::bigint
FROM {release}.totals AS w CROSS JOIN bins AS b
