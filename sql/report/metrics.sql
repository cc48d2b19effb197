-- The release's scalar metrics, by name. Identifiers: release.
SELECT name, value, unit, description FROM {release}.metrics ORDER BY name;
