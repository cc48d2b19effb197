-- 021_release_ledger: what composing releases safely needs (DESIGN, privacy rules 4 and 5).
-- Safe to re-run.
--
-- * catalog.releases is the ledger of what each dataset has published (which window, by
--   which method). A release whose window overlaps or nests a published one of the same
--   dataset is refused unless the operator accepts the risk: the reason is recorded here
--   and in the release's manifest (composition_risk), and shown by `anonymizers releases`.
-- * Published counts go through the interval filter of seed 004 §4.2
--   (catalog.interval_count); the counts of the ledger may therefore be NULL (below k).
-- * private.installation_secret keys the input fingerprint (an HMAC): a plain hash of the
--   source would let anyone holding a candidate file confirm it. Readable by the owner only.

ALTER TABLE catalog.releases ADD COLUMN IF NOT EXISTS composition_risk text;
COMMENT ON COLUMN catalog.releases.composition_risk IS
    'NULL, or the operator''s reason for publishing this release although its window overlaps, nests or is shorter than the ledger allows (privacy rule 4).';
ALTER TABLE catalog.releases ALTER COLUMN trajectories_in DROP NOT NULL;
COMMENT ON COLUMN catalog.releases.trajectories_in IS
    'Trajectories in the window, through the interval filter (the lower end of an interval of size parameters.count_interval; NULL: fewer than k).';

-- The interval filter (seed 004 §4.2, eq. 1): a count n >= k becomes the lower end of the
-- interval [k + width i, k + width (i + 1)) holding it; 0 stays 0 (nobody is nobody); a
-- count between 1 and k - 1 is suppressed (NULL). width = 1 gives exact counts.
CREATE OR REPLACE FUNCTION catalog.interval_count(n bigint, k integer, width integer)
RETURNS bigint LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT CASE WHEN n = 0 THEN 0
                WHEN n < k THEN NULL
                ELSE k + width * ((n - k) / width) END
$$;
COMMENT ON FUNCTION catalog.interval_count(bigint, integer, integer) IS
    'Interval filter of published counts (seed 004 §4.2): 0, NULL below k, else the lower end of the interval of size width (starting at k) that holds n.';

CREATE SCHEMA IF NOT EXISTS private;
REVOKE ALL ON SCHEMA private FROM PUBLIC;
CREATE TABLE IF NOT EXISTS private.installation_secret (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    secret    bytea NOT NULL CHECK (length(secret) >= 32),
    created   timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE private.installation_secret IS
    'Key of the input fingerprints (HMAC-SHA256); generated once per installation, never published.';
REVOKE ALL ON private.installation_secret FROM PUBLIC;
-- gen_random_uuid() draws from the server's strong random source: two of them carry 244
-- random bits.
INSERT INTO private.installation_secret (secret)
SELECT decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex')
ON CONFLICT (singleton) DO NOTHING;
