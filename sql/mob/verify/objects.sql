-- The published objects of a MOB release, numbered 0.. in object_id order (the numbering
-- sql/mob/verify/regions.sql uses). Identifiers: objects (schema, table).
SELECT object_id::text FROM {objects} ORDER BY object_id;
