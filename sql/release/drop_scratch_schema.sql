-- Drop one scratch schema of a run that failed or was abandoned, with all it holds.
-- Identifiers: {schema} (a work_* or build_* schema that claim_expired_run.sql returned
-- as present, in the transaction that holds the run's lock).
DROP SCHEMA IF EXISTS {schema} CASCADE;
