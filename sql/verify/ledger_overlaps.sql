-- Releases of the ledger (catalog.releases) of the same data (the dataset's name, or the
-- keyed fingerprint of its source file, which the verifier computes itself) whose window
-- overlaps [window_start, window_end), other than the release under test, with the risk
-- their operator accepted (NULL: none).
-- Params: dataset, source_fingerprint, window_start, window_end, release_name.
SELECT release_name, composition_risk
FROM catalog.releases
WHERE (dataset = %(dataset)s OR source_fingerprint = %(source_fingerprint)s)
  AND window_start < %(window_end)s
  AND %(window_start)s < window_end
  AND release_name <> %(release_name)s
ORDER BY 1;
