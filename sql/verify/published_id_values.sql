-- The distinct text values of one published column, for count_leaked_ids.sql, into the
-- scratch table of published_id_values_reset.sql: text arrays element by element
-- (integer columns, e.g. cell ids, are not ids of persons or trajectories and are not
-- scanned). Params: column_no. Identifiers: source (schema, table), column.
INSERT INTO pg_temp.published_id_values (column_no, value)
SELECT DISTINCT %(column_no)s::integer, unnest(
    CASE WHEN left(x.{column}::text, 1) = '{{'
         THEN string_to_array(trim(both '{{}}' from x.{column}::text), ',')
         ELSE ARRAY[x.{column}::text] END)
FROM {source} AS x;
