-- Session scratch for the raw-id scan of a release's text columns (rule 5): the distinct
-- values of each scanned column (published_id_values.sql), counted against the raw ids
-- by count_leaked_ids.sql, which drops it. Recreated empty here, so that a scan stopped
-- half-way in this session leaves nothing behind for the next.
DROP TABLE IF EXISTS pg_temp.published_id_values;
CREATE TEMP TABLE published_id_values (column_no integer, value text);
