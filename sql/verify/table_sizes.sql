-- Rows of every table of a release schema other than its figures: counts any analyst reads
-- with count(*), so a ratio over one of them gives nothing away. Params: schema.
SELECT t.table_name,
       (xpath('/row/n/text()', query_to_xml(
            format('SELECT count(*) AS n FROM %%I.%%I', t.table_schema, t.table_name),
            false, true, '')))[1]::text::bigint AS n
FROM information_schema.tables AS t
WHERE t.table_schema = %(schema)s AND t.table_type = 'BASE TABLE'
  AND t.table_name NOT IN ('metrics', 'metric_series')
ORDER BY 1;
