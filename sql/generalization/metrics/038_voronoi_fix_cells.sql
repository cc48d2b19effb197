-- Each fix's cell on the final Voronoi cells, for 047_sample_observations.sql (the
-- attacked trajectories' first fixes): the smallest id of the cells holding it, NULL for
-- a fix outside them all (a gap), the rule of 120_membership.sql and of the verifier. A
-- view: it is asked only for the sampled trajectories' fixes, each looked up in the
-- cells' GiST index, so no table of every fix's cell is made (progressive generalization
-- kept those in memory). Temporary: it lives as long as the metrics step's session.
-- Identifiers: work.
CREATE OR REPLACE TEMP VIEW voronoi_fix_cells AS
SELECT p.traj_id, p.t,
       (SELECT min(c.cell_id) FROM {work}.cells AS c
        WHERE ST_Intersects(c.geom, p.geom)) AS cell_id
FROM {work}.points AS p;
