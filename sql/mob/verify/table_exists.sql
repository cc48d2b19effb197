-- Whether a table exists: the verifier refuses a schema without a MOB release's tables,
-- and a database without raw.qids, saying which is missing.
-- Params: relation (a qualified name, each part quoted as an identifier).
SELECT to_regclass(%(relation)s) IS NOT NULL AS found;
