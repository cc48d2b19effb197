-- Differencing attack, generalization family: the published counts an attacker can match
-- across releases. A flow is keyed by the exact geometry of its two cells (release cell
-- ids are random, geometries are not: the fixed grid gives every release the same squares),
-- and counted as published, as the inclusive interval [n, n + count_interval - 1] its true
-- count lies in. Columns: kind, item_key (text, equal across releases iff the item is the
-- same), label (for people), n_lo, n_hi. No trailing semicolon: composed as a subquery.
-- Identifiers: release.
SELECT c.kind,
       encode(ST_AsEWKB(cf.geom), 'hex') || '>' || encode(ST_AsEWKB(ct.geom), 'hex')
           AS item_key,
       format('flow %s -> %s', ST_AsText(pf.geom), ST_AsText(pt.geom)) AS label,
       c.n::bigint AS n_lo,
       (c.n + m.count_interval - 1)::bigint AS n_hi
FROM {release}.flows AS f
JOIN {release}.cells AS cf ON cf.cell_id = f.from_cell
JOIN {release}.cells AS ct ON ct.cell_id = f.to_cell
JOIN {release}.cell_centroids AS pf ON pf.cell_id = f.from_cell
JOIN {release}.cell_centroids AS pt ON pt.cell_id = f.to_cell
CROSS JOIN {release}.manifest AS m
CROSS JOIN LATERAL (VALUES ('flow_persons', f.n_persons),
                           ('flow_trajectories', f.n_trajectories)) AS c(kind, n)
WHERE c.n IS NOT NULL
