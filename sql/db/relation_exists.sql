-- Whether a table (or any relation) exists: to_regclass is NULL when it does not (nor does
-- its schema), where reading it would raise. Params: relation (schema-qualified name,
-- e.g. 'release_x.manifest').
SELECT to_regclass(%(relation)s) IS NOT NULL AS present;
