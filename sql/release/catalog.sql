-- The catalog (the ledger of published releases), every column, oldest first: what
-- `anonymizers releases` lists. Params: none.
SELECT * FROM catalog.releases ORDER BY published_at;
