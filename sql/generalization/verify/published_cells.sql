-- The generalization verifier: the published cells of the release under test, as WKB.
-- Identifiers: release.
SELECT cell_id, ST_AsBinary(geom) AS wkb FROM {release}.cells ORDER BY cell_id;
