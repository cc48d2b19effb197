-- The published cells of the release under test, as WKB. Identifiers: release.
SELECT cell_id, ST_AsBinary(geom) FROM {release}.cells ORDER BY cell_id;
