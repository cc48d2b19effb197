-- Differencing attack: what it needs of a release's (or build's) manifest: its data,
-- method, k, window, SRID, parameters and the composition risk its operator accepted.
-- Identifiers: release.
SELECT dataset, method, k, window_start, window_end, srid, parameters, composition_risk,
       source_fingerprint
FROM {release}.manifest;
