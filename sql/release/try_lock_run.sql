-- Lock one run before its scratch schemas are dropped, without waiting: false when a step
-- of the run is running or its prepare is registering it (both hold the lock shared:
-- pipeline.steps.step, gate.prepare_work_schema) or another cleanup has it. Held until
-- the transaction ends. Params: lock_key (gate.work_lock_key of the run's work schema).
SELECT pg_try_advisory_xact_lock(hashtext(%(lock_key)s)) AS locked;
