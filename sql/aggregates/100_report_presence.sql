-- The report's choropleth of presence counts: each published cell as its zone, the
-- interval-filtered count n_lo as the weight, over its bin. Published data only.
-- Columns: wkb, weight, t_start, t_end. Identifiers: release.
SELECT ST_AsBinary(z.geom) AS wkb, c.n_lo::float8 AS weight, c.bin_start AS t_start,
       c.bin_end AS t_end
FROM {release}.presence_counts AS c
JOIN {release}.zones AS z USING (zone_id)
ORDER BY c.n_lo, c.bin_start;
