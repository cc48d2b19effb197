-- Which new cell took over each cell a step of progressive generalization merged away
-- (the generators merged into one, also those that snapped onto one lattice point), for
-- 125_membership_update.sql: a fix of a merged cell almost always lies in its successor.
-- A dropped cell has none. Params: old_ids, new_ids (aligned). Identifiers: work.
DROP TABLE IF EXISTS {work}.cell_successors;
CREATE TABLE {work}.cell_successors AS
SELECT old_id, new_id
FROM unnest(%(old_ids)s::integer[], %(new_ids)s::integer[]) AS s (old_id, new_id);
