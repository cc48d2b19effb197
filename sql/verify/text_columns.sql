-- Every column of a release schema's tables that can hold a given text (text-like,
-- JSON, bytea, and arrays of them): where a plain digest could be published. Numbers
-- and geometries cannot hold one, and turning every row into JSON to search it (the
-- geometries as GeoJSON) took 22.7 s on the trajectories of a 5M-fix city.
-- Params: schema.
SELECT table_name, column_name
FROM information_schema.columns AS c
JOIN information_schema.tables AS t USING (table_schema, table_name)
WHERE c.table_schema = %(schema)s AND t.table_type = 'BASE TABLE'
  AND (c.data_type IN ('text', 'character varying', 'character', 'uuid', 'json', 'jsonb',
                       'bytea')
       OR c.udt_name IN ('_text', '_varchar', '_bpchar', '_uuid', '_json', '_jsonb', '_bytea'))
ORDER BY 1, 2;
