-- A database of the pipeline's server that only its owner may connect to (Airflow's
-- metadata: its XComs, run confs and logs' index are the owner's; the analyst role, like
-- every role, gets CONNECT through PUBLIC by default). Safe to re-run.
-- Identifiers: database.
REVOKE CONNECT, TEMPORARY ON DATABASE {database} FROM PUBLIC;
