-- Publish: the build schema becomes the release schema, readable by analyst, with its
-- catalog row: one transaction, so a release is visible with its catalog row or not at all.
-- The caller holds the release's advisory lock and checked it is not yet in the catalog.
-- Identifiers: build, release.
ALTER SCHEMA {build} RENAME TO {release};
GRANT USAGE ON SCHEMA {release} TO analyst;
GRANT SELECT ON ALL TABLES IN SCHEMA {release} TO analyst;
INSERT INTO catalog.releases (release_name, dataset, method, k, k_counts, privacy_model,
                              window_start, window_end, parameters, trajectories_in,
                              trajectories_out, code_version, composition_risk)
SELECT release_name, dataset, method, k, k_counts, privacy_model, window_start, window_end,
       parameters, trajectories_in, trajectories_out, code_version, composition_risk
FROM {release}.manifest;
