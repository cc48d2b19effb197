-- The manifest row of a release (or build) schema under test, every column by name.
-- Identifiers: release.
SELECT * FROM {release}.manifest;
