-- Aggregates verifier: the true table, from agv_fixes and agv_zones. agv_person_bins: each
-- person's dominant zone per whole bin (most fixes; ties: the smaller zone_rank);
-- agv_cells: persons per (bin, zone) (presence: origin_key NULL), or, with od, persons
-- observed in bins j - 1 and j per (bin j, zone in j - 1, zone in j); agv_bins: every whole
-- bin's total (0 where empty).
-- Params: n_bins, od (boolean).
DROP TABLE IF EXISTS pg_temp.agv_person_bins, pg_temp.agv_cells, pg_temp.agv_bins;
CREATE TEMP TABLE agv_person_bins AS
SELECT user_id, bin, zone_key
FROM (SELECT f.user_id, f.bin, f.zone_key,
             row_number() OVER (PARTITION BY f.user_id, f.bin
                                ORDER BY f.fixes DESC, z.zone_rank) AS choice
      FROM (SELECT user_id, bin, zone_key, count(*) AS fixes FROM agv_fixes
            WHERE bin >= 0 AND bin < %(n_bins)s
            GROUP BY user_id, bin, zone_key) AS f
      JOIN agv_zones AS z ON z.zone_key = f.zone_key) AS ranked
WHERE choice = 1;

CREATE TEMP TABLE agv_cells AS
SELECT later.bin, earlier.zone_key AS origin_key, later.zone_key, count(*) AS n
FROM agv_person_bins AS later
LEFT JOIN agv_person_bins AS earlier
  ON %(od)s AND earlier.user_id = later.user_id AND earlier.bin = later.bin - 1
WHERE NOT %(od)s OR earlier.user_id IS NOT NULL
GROUP BY later.bin, earlier.zone_key, later.zone_key;

CREATE TEMP TABLE agv_bins AS
SELECT b.bin, (SELECT coalesce(sum(c.n), 0) FROM agv_cells AS c WHERE c.bin = b.bin) AS n
FROM generate_series(0, %(n_bins)s - 1) AS b(bin);
