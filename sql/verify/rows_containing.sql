-- How many rows of one table hold a given text anywhere (in any column, as JSON text).
-- Params: needle. Identifiers: source (schema, table).
SELECT count(*) FROM {source} AS r WHERE strpos(to_jsonb(r)::text, %(needle)s) > 0;
