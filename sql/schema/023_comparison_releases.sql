-- 023_comparison_releases: releases that `anonymizers compare` publishes for the data
-- owner's choice of a method (issue 11). Every method runs on one window through the normal
-- gate, so each is a verified release in the ledger, with its composition risk accepted for
-- that comparison only. Analysts never read them: the publish step grants nothing on a
-- comparison's schemas (side by side, ten releases of one window are ten views of the same
-- people), and catalog.latest, which points analysts at a dataset's current release, skips
-- them. They stay in the ledger, so a later release of an overlapping window is still
-- refused unless its risk is accepted. Safe to re-run.
ALTER TABLE catalog.releases ADD COLUMN IF NOT EXISTS comparison text;
COMMENT ON COLUMN catalog.releases.comparison IS
    'NULL, or the id of the `anonymizers compare` run that published this release for the data owner''s comparison only: analyst cannot read its schema.';

CREATE OR REPLACE VIEW catalog.latest AS
    SELECT DISTINCT ON (dataset, method) *
    FROM catalog.releases
    WHERE comparison IS NULL
    ORDER BY dataset, method, published_at DESC;
COMMENT ON VIEW catalog.latest IS
    'The newest release of each dataset and method that analysts can read (comparison releases excluded).';
