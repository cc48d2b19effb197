-- Runs whose scratch schemas were dropped leave the ledger of runs. Params: work_schemas.
DELETE FROM private.release_runs WHERE work_schema = ANY(%(work_schemas)s);
