-- How many rows of one table hold a given text in one column (as text: arrays, JSON and
-- bytea (hex) included). Params: needle. Identifiers: source (schema, table), column.
SELECT count(*) AS n_rows FROM {source} AS r WHERE strpos(r.{column}::text, %(needle)s) > 0;
