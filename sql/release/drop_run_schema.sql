-- Drop one scratch schema of a published release's runs, with all it holds (the caller
-- holds the run's lock or is the run). Identifiers: {schema}.
DROP SCHEMA {schema} CASCADE;
