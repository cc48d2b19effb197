-- 040_accepted_risks: the ledger keyed by the data, and every risk an operator accepted.
-- Safe to re-run.
--
-- * source_fingerprint: the keyed fingerprint (HMAC-SHA256, installation secret) of the
--   source file a release was made from. The ledger matches on it as well as on the
--   dataset's name, so the same file loaded as two datasets is one ledger (privacy rule 4).
--   Releases published before this column stay matched by their dataset's name.
-- * precision_risk, attack_risk: like composition_risk, NULL or the operator's reason for
--   publishing despite a rule: a published precision below the floor (privacy rule 7), an
--   attack of the suite measuring a risk above 1/k that the privacy model does not cover
--   (privacy rule 9). Shown by `anonymizers releases` and in the report.

ALTER TABLE catalog.releases ADD COLUMN IF NOT EXISTS source_fingerprint text;
ALTER TABLE catalog.releases ADD COLUMN IF NOT EXISTS precision_risk text;
ALTER TABLE catalog.releases ADD COLUMN IF NOT EXISTS attack_risk text;
CREATE INDEX IF NOT EXISTS releases_source_fingerprint
    ON catalog.releases (source_fingerprint, window_start);
COMMENT ON COLUMN catalog.releases.source_fingerprint IS
    'Keyed fingerprint (HMAC-SHA256 under this installation''s secret) of the source file: releases of the same file share one ledger whatever their dataset name; it confirms nothing to anyone without the secret.';
COMMENT ON COLUMN catalog.releases.precision_risk IS
    'NULL, or the operator''s reason for publishing although a parameter that sets a published precision (lattice, cell size, epsilon) is below the 50 m floor (privacy rule 7).';
COMMENT ON COLUMN catalog.releases.attack_risk IS
    'NULL, or the operator''s reason for publishing although an attack of the suite measured a re-identification risk above 1/k that the method''s privacy model does not cover (privacy rule 9).';

-- The view's columns were fixed when it was made: make it again to show the new ones.
CREATE OR REPLACE VIEW catalog.latest AS
    SELECT DISTINCT ON (dataset, method) *
    FROM catalog.releases
    WHERE comparison IS NULL
    ORDER BY dataset, method, published_at DESC;
