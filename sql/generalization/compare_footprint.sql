-- Generalization (seed 000): every published location of every published trajectory, for
-- `anonymizers compare`: the cell of each position of its cell sequence. A trajectory
-- stands for one trajectory of the input (n_persons 1: the release counts no persons per
-- trajectory); the release publishes no time (t_start, t_end NULL).
-- The cell sequence is a JSON array of cell ids. Identifiers: release.
SELECT t.traj_id::text AS unit, u.ord::integer AS seq, 1::float8 AS n_persons, c.geom,
       NULL::timestamptz AS t_start, NULL::timestamptz AS t_end
FROM {release}.trajectories AS t
CROSS JOIN LATERAL jsonb_array_elements_text(t.cells) WITH ORDINALITY AS u(cell_id, ord)
JOIN {release}.cells AS c ON c.cell_id = u.cell_id::integer;
