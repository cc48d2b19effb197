-- convert_superuser: a cluster made before issue 7 had the pipeline role as its bootstrap
-- superuser (initdb -U anonymizers, trust on the socket). That role is renamed to the
-- bootstrap superuser's name (psql variable admin, `postgres`), which only the server's
-- OS user reaches (peer); bootstrap.sql then creates the pipeline role (variable owner)
-- anew, without SUPERUSER, and transfer_ownership.sql hands it its databases and objects.
--
-- Why rename rather than ALTER ROLE ... NOSUPERUSER: the bootstrap role (OID 10) owns the
-- system catalogs and functions; demoted, a non-superuser would own them. Renamed, it
-- keeps them, and PostGIS, as the superuser should.
--
-- Run by `anonymizers db up` (anonymizers/db/cluster.py) connected as that role. A session
-- cannot rename its own role: it lends its identity to a temporary superuser for the
-- rename (SET SESSION AUTHORIZATION), then takes it back. One transaction.
\set ON_ERROR_STOP on
SET client_min_messages = warning;
BEGIN;
DROP ROLE IF EXISTS anonymizers_conversion;
CREATE ROLE anonymizers_conversion SUPERUSER NOLOGIN;
SET SESSION AUTHORIZATION anonymizers_conversion;
ALTER ROLE :"owner" RENAME TO :"admin";
RESET SESSION AUTHORIZATION;
DROP ROLE anonymizers_conversion;
COMMIT;
