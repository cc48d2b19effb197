-- The installation's secret key, under which fingerprints of inputs are keyed (HMAC):
-- readable by the pipeline owner only. No row: the schema predates it. Params: none.
SELECT secret FROM private.installation_secret;
