-- Aggregates: every published cell as a unit of `anonymizers compare`, standing for its
-- published count n_lo (the interval filter's lower end). A presence cell is its zone over
-- its bin; an origin-destination cell is its origin over the bin before and its
-- destination over its bin (two locations, so compare's flows see the move).
-- Identifiers: release.
SELECT 'p' || c.zone_id || '@' || extract(epoch FROM c.bin_start) AS unit, 1 AS seq,
       c.n_lo::float8 AS n_persons, z.geom, c.bin_start AS t_start, c.bin_end AS t_end
FROM {release}.presence_counts AS c
JOIN {release}.zones AS z USING (zone_id)
UNION ALL
SELECT 'od' || c.origin_zone_id || '>' || c.destination_zone_id || '@'
           || extract(epoch FROM c.bin_start), s.seq, c.n_lo::float8, z.geom,
       CASE WHEN s.seq = 1 THEN c.bin_start - (c.bin_end - c.bin_start) ELSE c.bin_start END,
       CASE WHEN s.seq = 1 THEN c.bin_start ELSE c.bin_end END
FROM {release}.od_counts AS c
CROSS JOIN LATERAL (VALUES (1, c.origin_zone_id), (2, c.destination_zone_id))
    AS s(seq, zone_id)
JOIN {release}.zones AS z ON z.zone_id = s.zone_id;
