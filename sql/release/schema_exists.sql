-- Whether a schema exists (to_regnamespace is NULL when not). Params: name.
SELECT to_regnamespace(%(name)s) IS NOT NULL AS present;
