-- Aggregates: the true counts of every cell (bin, origin zone, zone) and every bin (the
-- persons, or moves, of the bin: the sum of its cells), for the suppression step. cell_index
-- numbers cells by bin, then origin's and zone's zone_rank: the order that breaks ties
-- between equal counts when the suppression picks "the smallest first". Every whole bin has
-- a row in ag_bins, empty ones with n = 0.
-- Params: n_bins. Identifiers: work.
DROP TABLE IF EXISTS {work}.ag_cells, {work}.ag_bins, {work}.ag_cell_members;
CREATE TABLE {work}.ag_cells AS
SELECT (row_number() OVER (ORDER BY c.bin, o.zone_rank NULLS FIRST, z.zone_rank) - 1)::integer
           AS cell_index,
       c.bin, c.origin_key, c.zone_key, c.n
FROM (SELECT bin, origin_key, zone_key, count(*) AS n
      FROM {work}.ag_members
      GROUP BY bin, origin_key, zone_key) AS c
JOIN {work}.ag_zones AS z ON z.zone_key = c.zone_key
LEFT JOIN {work}.ag_zones AS o ON o.zone_key = c.origin_key;
ALTER TABLE {work}.ag_cells ADD PRIMARY KEY (cell_index);

CREATE TABLE {work}.ag_bins AS
SELECT b.bin, coalesce(sum(c.n), 0)::bigint AS n
FROM generate_series(0, %(n_bins)s - 1) AS b(bin)
LEFT JOIN {work}.ag_cells AS c ON c.bin = b.bin
GROUP BY b.bin;
ALTER TABLE {work}.ag_bins ADD PRIMARY KEY (bin);

-- Which cell each member is in (the manifest's and the metrics' persons published).
CREATE TABLE {work}.ag_cell_members AS
SELECT c.cell_index, m.user_id
FROM {work}.ag_members AS m
JOIN {work}.ag_cells AS c
  ON c.bin = m.bin AND c.zone_key = m.zone_key
 AND c.origin_key IS NOT DISTINCT FROM m.origin_key;
