-- Every column of a release schema's tables that could hold a given text: all but those
-- of types that cannot (numbers, booleans, dates and times, geometries, and arrays of
-- them), so a text inside JSON, bytea, a composite, an extension's type or any other
-- text-bearing type is still found. Turning every row into JSON to search it (the
-- geometries as GeoJSON) took 22.7 s on the trajectories of a 5M-fix city.
-- Params: schema.
SELECT table_name, column_name
FROM information_schema.columns AS c
JOIN information_schema.tables AS t USING (table_schema, table_name)
WHERE c.table_schema = %(schema)s AND t.table_type = 'BASE TABLE'
  AND c.data_type NOT IN ('smallint', 'integer', 'bigint', 'numeric', 'real',
                          'double precision', 'boolean', 'date', 'interval',
                          'timestamp without time zone', 'timestamp with time zone',
                          'time without time zone', 'time with time zone')
  AND c.udt_name NOT IN ('geometry', 'geography', 'box2d', 'box3d',
                         '_int2', '_int4', '_int8', '_numeric', '_float4', '_float8',
                         '_bool', '_date', '_interval', '_timestamp', '_timestamptz')
ORDER BY 1, 2;
