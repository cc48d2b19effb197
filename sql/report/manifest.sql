-- The release's manifest row, for the report's words and tables (issue 11).
-- Identifiers: release.
SELECT * FROM {release}.manifest;
