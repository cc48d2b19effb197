-- The distinct text values of one published column, for count_leaked_ids.sql, into the
-- scratch table of published_id_values_reset.sql: text arrays element by element, JSON
-- by every string in it at any depth (integer columns and JSON numbers, e.g. cell ids, are
-- not ids of persons or trajectories and are not scanned).
-- Params: column_no. Identifiers: source (schema, table), column.
INSERT INTO pg_temp.published_id_values (column_no, value)
SELECT DISTINCT %(column_no)s::integer, unnest(
    CASE WHEN pg_typeof(x.{column}) IN ('json'::regtype, 'jsonb'::regtype)
         THEN ARRAY(SELECT s #>> '{{}}'
                    FROM jsonb_path_query(x.{column}::text::jsonb,
                                          '$.** ? (@.type() == "string")') AS s)
         WHEN left(x.{column}::text, 1) = '{{'
         THEN string_to_array(trim(both '{{}}' from x.{column}::text), ',')
         ELSE ARRAY[x.{column}::text] END)
FROM {source} AS x;
