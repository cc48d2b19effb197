-- Aggregates verifier: every published zone and the zone of the verifier's derivation with
-- exactly its geometry (zone_key NULL: a zone that is neither a square of the lattice a
-- fix of the window is in, nor a place of the dataset, nor a cell of zones_release), and
-- whether its centroid is exactly the expected one (the square's centre, the place's
-- point; no row of zone_centroids for a cell; its foreign key ties every point to a
-- published zone).
-- Identifiers: zones, zone_centroids (the release's tables).
SELECT p.zone_id, z.zone_key,
       (z.zone_key IS NOT NULL
        AND ST_AsEWKB(c.geom) IS NOT DISTINCT FROM ST_AsEWKB(z.centroid)) AS centroid_ok
FROM {zones} AS p
LEFT JOIN agv_zones AS z ON ST_AsEWKB(z.geom) = ST_AsEWKB(p.geom)
LEFT JOIN {zone_centroids} AS c USING (zone_id)
ORDER BY p.zone_id;
