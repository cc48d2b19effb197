-- A run (re)starts afresh: whatever an earlier attempt of it left in its work and build
-- schemas goes, and its work schema is created empty. Identifiers: {work}, {build}.
DROP SCHEMA IF EXISTS {work} CASCADE;
DROP SCHEMA IF EXISTS {build} CASCADE;
CREATE SCHEMA {work};
