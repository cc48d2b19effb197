-- Verifier of trajectory groups (seed 004): the published groups and od groups with their
-- places as text arrays (the release holds them as JSON arrays, as GIS tools take them),
-- for the checks that compare place sequences (places, occurrences, assignment, od groups).
-- A places value that is no JSON array of strings becomes NULL here and is reported by
-- geometry.sql. Identifiers: groups, od_groups.
DROP TABLE IF EXISTS pg_temp.tgv_groups, pg_temp.tgv_od_groups;
CREATE TEMP TABLE tgv_groups ON COMMIT DROP AS
SELECT g.group_id, t.places, g.length, g.n_lo, g.n_hi
FROM {groups} AS g
CROSS JOIN LATERAL (
    SELECT CASE WHEN jsonb_typeof(g.places) = 'array'
                     AND NOT jsonb_path_exists(g.places, '$[*] ? (@.type() != "string")')
                THEN ARRAY(SELECT e FROM jsonb_array_elements_text(g.places)
                                         WITH ORDINALITY AS u(e, i) ORDER BY i)
           END AS places) AS t;
CREATE TEMP TABLE tgv_od_groups ON COMMIT DROP AS
SELECT o.od_group_id, o.group_id, o.kind, t.places, o.n_lo, o.n_hi
FROM {od_groups} AS o
CROSS JOIN LATERAL (
    SELECT CASE WHEN jsonb_typeof(o.places) = 'array'
                     AND NOT jsonb_path_exists(o.places, '$[*] ? (@.type() != "string")')
                THEN ARRAY(SELECT e FROM jsonb_array_elements_text(o.places)
                                         WITH ORDINALITY AS u(e, i) ORDER BY i)
           END AS places) AS t;
-- Keyed like the release's ids (the checks group by them); a repeated id stops the check.
ALTER TABLE tgv_groups ADD PRIMARY KEY (group_id);
ALTER TABLE tgv_od_groups ADD PRIMARY KEY (od_group_id);
ANALYZE tgv_groups;
ANALYZE tgv_od_groups;
