-- The generalization verifier: published cells whose centroid is not the polygon's own centroid: their position was
-- computed from data (a Voronoi generator), so its support must be checked.
-- Identifiers: release.
SELECT cell_id, ST_X(centroid) AS x, ST_Y(centroid) AS y
FROM {release}.cells
WHERE ST_Distance(centroid, ST_Centroid(geom)) > 1e-6
ORDER BY cell_id;
