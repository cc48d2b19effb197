-- What a published release holds, for the CLI's one-line summary: the manifest's figures
-- and the names of its data tables. Params: schema. Identifiers: release.
SELECT m.method, m.k, m.k_counts, m.trajectories_out, m.published_unit, m.suppressed,
       m.verifier_result ->> 'passed' AS passed,
       (SELECT string_agg(table_name, ', ' ORDER BY table_name)
        FROM information_schema.tables
        WHERE table_schema = %(schema)s
          AND table_name NOT IN ('manifest', 'metrics', 'metric_series')) AS tables
FROM {release}.manifest AS m;
