-- Whether the manifest of a build schema records a passing verifier result (publish
-- refuses anything else). Identifiers: {build}.
SELECT coalesce((verifier_result ->> 'passed')::boolean, false) AS passed
FROM {build}.manifest;
