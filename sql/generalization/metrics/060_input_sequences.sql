-- Each input trajectory's generalized sequence (work.visits) in published cell ids; visits
-- of unpublished cells are left out (the attacker can only see published cells).
-- Identifiers: work.
SELECT v.traj_id,
       coalesce(array_agg(m.release_cell_id ORDER BY v.visit_no)
                    FILTER (WHERE m.release_cell_id IS NOT NULL), '{{}}') AS cells
FROM {work}.visits AS v
LEFT JOIN {work}.cell_map AS m USING (cell_id)
GROUP BY v.traj_id;
