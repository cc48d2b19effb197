-- The generator of each group of cells about to be merged, from the fixes in them: the
-- mean over the group's persons of each person's mean position (each person weighs the
-- same: a person with most of the fixes, e.g. a parked car, cannot pull it to their place;
-- DESIGN privacy rule 2), and its support, the distinct persons it is computed from.
-- The caller snaps it to the lattice. One pass over the groups' fixes through the
-- point_cells (cell_id) index; the per-person grouping replaces the count(DISTINCT) it
-- needed anyway.
-- Params: groups (integer[] of group ids, one per cell), cells (integer[]).
-- Returns group_id, n_persons, n_points, x, y. Identifiers: work.
WITH per_person AS (
    SELECT g.group_id, pc.user_id, count(*) AS n,
           avg(ST_X(pc.geom)) AS x, avg(ST_Y(pc.geom)) AS y
    FROM unnest(%(groups)s::integer[], %(cells)s::integer[]) AS g(group_id, cell_id)
    JOIN {work}.point_cells AS pc USING (cell_id)
    GROUP BY g.group_id, pc.user_id
)
SELECT group_id, count(*) AS n_persons, sum(n) AS n_points, avg(x) AS x, avg(y) AS y
FROM per_person
GROUP BY group_id
ORDER BY group_id;
