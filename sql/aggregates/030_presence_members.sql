-- Aggregates, presence counts: who a cell counts. A person counts in the cell of its
-- dominant zone in each bin it was observed in (origin_key NULL: presence has no origin).
-- Identifiers: work.
DROP TABLE IF EXISTS {work}.ag_members;
CREATE TABLE {work}.ag_members AS
SELECT user_id, bin, NULL::text AS origin_key, zone_key
FROM {work}.ag_person_bins;
