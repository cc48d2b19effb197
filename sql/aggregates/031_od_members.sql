-- Aggregates, origin-destination counts: who a cell counts. A person observed in two
-- consecutive bins j - 1 and j makes one move, from its dominant zone in j - 1 (origin_key)
-- to its dominant zone in j (zone_key), counted in bin j; stayers (origin = destination)
-- included. So the cells of bin j partition the persons observed in both j - 1 and j.
-- Identifiers: work.
DROP TABLE IF EXISTS {work}.ag_members;
CREATE TABLE {work}.ag_members AS
SELECT b.user_id, b.bin, a.zone_key AS origin_key, b.zone_key
FROM {work}.ag_person_bins AS b
JOIN {work}.ag_person_bins AS a ON a.user_id = b.user_id AND a.bin = b.bin - 1;
