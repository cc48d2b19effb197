-- The catalog (the ledger of published releases), every column, oldest first: what
-- `anonymizers releases` lists, optionally of one dataset and/or one method.
-- Params: dataset, method (NULL: every one).
SELECT *
FROM catalog.releases
WHERE (%(dataset)s::text IS NULL OR dataset = %(dataset)s::text)
  AND (%(method)s::text IS NULL OR method = %(method)s::text)
ORDER BY published_at;
