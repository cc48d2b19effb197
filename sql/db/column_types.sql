-- The type (format_type) of each column of a table, for a COPY that encodes its values as
-- the columns' types (anonymizers/db/binary_copy.py). Params: relation (the table's
-- quoted, schema-qualified name; pg_temp names the session's temporary schema).
SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type
FROM pg_attribute AS a
WHERE a.attrelid = %(relation)s::regclass
  AND a.attnum > 0
  AND NOT a.attisdropped
