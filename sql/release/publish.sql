-- Publish: the build schema becomes the release schema, with its catalog row: one
-- transaction, so a release is visible with its catalog row or not at all. The caller
-- holds the release's advisory lock, checked it is not yet in the catalog, and grants
-- analyst read access in the same transaction (release/grant_analyst.sql) unless the
-- release belongs to a comparison (parameters.comparison, schema 023).
-- Params: comment (the schema's comment, what an analyst reads about it).
-- Identifiers: build, release.
ALTER SCHEMA {build} RENAME TO {release};
COMMENT ON SCHEMA {release} IS %(comment)s;
INSERT INTO catalog.releases (release_name, dataset, method, k, k_counts, privacy_model,
                              window_start, window_end, parameters, trajectories_in,
                              trajectories_out, code_version, composition_risk,
                              precision_risk, attack_risk, source_fingerprint, comparison)
SELECT release_name, dataset, method, k, k_counts, privacy_model, window_start, window_end,
       parameters, trajectories_in, trajectories_out, code_version, composition_risk,
       precision_risk, attack_risk, source_fingerprint, parameters ->> 'comparison'
FROM {release}.manifest;
