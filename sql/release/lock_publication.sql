-- Publication is serialized per dataset (the ledger: of two overlapping runs that both
-- passed prepare, only the first to publish gets through) and per release (never twice).
-- Held until the transaction ends. Params: dataset, release_name.
SELECT pg_advisory_xact_lock(hashtext('ledger:' || %(dataset)s));
SELECT pg_advisory_xact_lock(hashtext(%(release_name)s));
