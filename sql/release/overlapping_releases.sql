-- The ledger's published releases of a dataset whose window overlaps (or nests, or equals)
-- the half-open window [window_start, window_end), other than the release itself.
-- Adjacent windows (one ends where the other starts) do not overlap.
-- Params: dataset, window_start, window_end, release_name.
SELECT release_name, method, window_start, window_end, composition_risk
FROM catalog.releases
WHERE dataset = %(dataset)s
  AND window_start < %(window_end)s
  AND %(window_start)s < window_end
  AND release_name <> %(release_name)s
ORDER BY window_start, release_name;
