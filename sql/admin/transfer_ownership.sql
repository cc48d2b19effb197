-- transfer_ownership: the database this runs in, and every schema, table, view, sequence,
-- routine and type in it that the bootstrap superuser (OID 10) owns, go to the pipeline
-- role (psql variable owner). Safe to re-run.
--
-- Run by `anonymizers db up` as the bootstrap superuser, in each database that superuser
-- owns besides postgres and template1: the databases of a cluster converted by
-- convert_superuser.sql, where the pipeline role used to be that superuser. System schemas
-- and the members of extensions (PostGIS's functions, types and spatial_ref_sys) stay the
-- superuser's. Indexes, row types, array types and the sequences of identity and serial
-- columns follow their table; each partition is altered on its own (ALTER TABLE ...
-- OWNER does not recurse to partitions).
\set ON_ERROR_STOP on
SET client_min_messages = warning;
SET anonymizers.owner = :'owner';  -- for the DO block, which sees no psql variables

DO $$
DECLARE
    owner constant text := current_setting('anonymizers.owner');
    ddl text;
BEGIN
    FOR ddl IN
        SELECT format('ALTER SCHEMA %I OWNER TO %I', n.nspname, owner)
        FROM pg_namespace AS n
        WHERE n.nspowner = 10 AND n.nspname !~ '^(pg_|information_schema$)'
          AND NOT EXISTS (SELECT FROM pg_depend AS d WHERE d.classid = 'pg_namespace'::regclass
                          AND d.objid = n.oid AND d.deptype = 'e')
        UNION ALL
        SELECT format('ALTER %s %s OWNER TO %I',
                      CASE c.relkind WHEN 'v' THEN 'VIEW' WHEN 'm' THEN 'MATERIALIZED VIEW'
                                     WHEN 'S' THEN 'SEQUENCE' WHEN 'f' THEN 'FOREIGN TABLE'
                                     ELSE 'TABLE' END,
                      c.oid::regclass, owner)
        FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace
        WHERE c.relowner = 10 AND c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f')
          AND n.nspname !~ '^(pg_|information_schema$)'
          AND NOT EXISTS (SELECT FROM pg_depend AS d WHERE d.classid = 'pg_class'::regclass
                          AND d.objid = c.oid
                          AND (d.deptype = 'e' OR (c.relkind = 'S' AND d.deptype IN ('a', 'i'))))
        UNION ALL
        SELECT format('ALTER ROUTINE %s OWNER TO %I', p.oid::regprocedure, owner)
        FROM pg_proc AS p JOIN pg_namespace AS n ON n.oid = p.pronamespace
        WHERE p.proowner = 10 AND n.nspname !~ '^(pg_|information_schema$)'
          AND NOT EXISTS (SELECT FROM pg_depend AS d WHERE d.classid = 'pg_proc'::regclass
                          AND d.objid = p.oid AND d.deptype = 'e')
        UNION ALL
        SELECT format('ALTER TYPE %s OWNER TO %I', t.oid::regtype, owner)
        FROM pg_type AS t JOIN pg_namespace AS n ON n.oid = t.typnamespace
        WHERE t.typowner = 10 AND n.nspname !~ '^(pg_|information_schema$)'
          AND (t.typtype IN ('e', 'd', 'r')
               OR (t.typtype = 'c' AND (SELECT relkind FROM pg_class WHERE oid = t.typrelid) = 'c'))
          AND NOT EXISTS (SELECT FROM pg_depend AS d WHERE d.classid = 'pg_type'::regclass
                          AND d.objid = t.oid AND d.deptype = 'e')
    LOOP
        EXECUTE ddl;
    END LOOP;
    EXECUTE format('ALTER DATABASE %I OWNER TO %I', current_database(), owner);
END
$$;
