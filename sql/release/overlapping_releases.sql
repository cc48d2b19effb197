-- The ledger's published releases of the same data whose window overlaps (or nests, or
-- equals) the half-open window [window_start, window_end), other than the release itself.
-- The same data is the same dataset name or the same keyed source fingerprint: a file
-- loaded again under another name shares its ledger (privacy rule 4). Adjacent windows (one
-- ends where the other starts) do not overlap.
-- Params: dataset, source_fingerprint, window_start, window_end, release_name.
SELECT release_name, dataset, method, window_start, window_end, composition_risk
FROM catalog.releases
WHERE (dataset = %(dataset)s OR source_fingerprint = %(source_fingerprint)s)
  AND window_start < %(window_end)s
  AND %(window_start)s < window_end
  AND release_name <> %(release_name)s
ORDER BY window_start, release_name;
