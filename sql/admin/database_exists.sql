-- Whether a database of this server exists (Airflow's metadata database is created once).
-- Params: name.
SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = %(name)s) AS present;
