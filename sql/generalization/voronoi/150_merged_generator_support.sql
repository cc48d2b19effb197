-- Distinct persons whose fixes lie in each group of cells about to be merged: the
-- support of the merged generator (computed from exactly those fixes).
-- Params: groups (integer[] of group ids, one per cell), cells (integer[]).
-- Identifiers: work.
SELECT g.group_id, count(DISTINCT pc.user_id)
FROM unnest(%(groups)s::integer[], %(cells)s::integer[]) AS g(group_id, cell_id)
JOIN {work}.point_cells AS pc USING (cell_id)
GROUP BY g.group_id;
