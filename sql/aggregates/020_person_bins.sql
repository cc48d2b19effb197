-- Aggregates: each person's dominant zone in each whole time bin (FlowKit's most frequent
-- location): the zone holding most of the person's fixes in the bin, ties to the zone of
-- the smaller zone_rank. A person is counted once per bin, so the cells of a bin partition
-- its persons and every count is additive.
-- Params: n_bins (whole bins in the window). Identifiers: work.
DROP TABLE IF EXISTS {work}.ag_person_bins;
CREATE TABLE {work}.ag_person_bins AS
SELECT DISTINCT ON (f.user_id, f.bin) f.user_id, f.bin, f.zone_key
FROM (SELECT user_id, bin, zone_key, count(*) AS fixes
      FROM {work}.ag_fixes
      WHERE bin < %(n_bins)s
      GROUP BY user_id, bin, zone_key) AS f
JOIN {work}.ag_zones AS z USING (zone_key)
ORDER BY f.user_id, f.bin, f.fixes DESC, z.zone_rank;
ALTER TABLE {work}.ag_person_bins ADD PRIMARY KEY (user_id, bin);
