-- A step of a run holds its run's lock shared for as long as it works (released when its
-- transaction ends): a cleanup, which takes it exclusively, never drops the scratch
-- schemas of a run that is working. Params: lock_key (gate.run_lock_key of the run).
SELECT pg_advisory_xact_lock_shared(hashtext(%(lock_key)s));
