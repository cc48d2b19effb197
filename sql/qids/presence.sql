-- When each object of a prepared window has a position (sql/mob/020_positions.sql), as
-- CSV object_index,t_index: the presence matrix QIDs are generated from.
-- Params: none. Identifiers: work (the schema holding mob_cells).
COPY (SELECT object_index, t_index FROM {work}.mob_cells ORDER BY object_index, t_index)
TO STDOUT (FORMAT csv)
