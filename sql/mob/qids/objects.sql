-- The persons of a prepared window's objects, in object_index order (0..n-1).
-- Params: none. Identifiers: work (the schema holding mob_objects).
SELECT user_id FROM {work}.mob_objects ORDER BY object_index;
