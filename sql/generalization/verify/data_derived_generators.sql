-- The generalization verifier: published cells whose centroid is not the polygon's own centroid: their position was
-- computed from data (a Voronoi generator), so its support must be checked.
-- A cell's point is in cell_centroids. Identifiers: release.
SELECT c.cell_id, ST_X(p.geom) AS x, ST_Y(p.geom) AS y
FROM {release}.cells AS c
JOIN {release}.cell_centroids AS p USING (cell_id)
WHERE ST_Distance(p.geom, ST_Centroid(c.geom)) > 1e-6
ORDER BY c.cell_id;
