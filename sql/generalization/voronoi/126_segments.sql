-- The reference membership in SQL, with 120_membership.sql before it and
-- 128_crossings.sql after it: the tests hold the cells and crossings progressive
-- generalization keeps in memory (fix_cells.py), and the visits it writes, to it. The
-- pipeline does not run it.
-- The segments between two fixes in different cells (or in a gap) go to recross, with
-- their ends' cells, for 128_crossings.sql. A segment between two fixes of one cell stays
-- inside it (cells are convex): it has no crossings. The view {work}.memberships holds
-- the fixes in cells and the crossings, as 050_visits.sql reads them (the grid's
-- memberships are a table of the fixes' squares).
-- Produces {work}.recross, {work}.crossings and the view {work}.memberships.
-- Identifiers: work.
SET LOCAL work_mem = '256MB';
DROP VIEW IF EXISTS {work}.memberships;
DROP TABLE IF EXISTS {work}.crossings;
CREATE TABLE {work}.crossings (
    traj_id text, user_id text, t1 timestamptz, t2 timestamptz, t timestamptz, cell_id integer
);
CREATE VIEW {work}.memberships AS
SELECT traj_id, user_id, t, cell_id FROM {work}.point_cells WHERE cell_id IS NOT NULL
UNION ALL
SELECT traj_id, user_id, t, cell_id FROM {work}.crossings;

DROP TABLE IF EXISTS {work}.recross;
CREATE TABLE {work}.recross AS
SELECT row_number() OVER () AS seg_id, *,
       ST_X(ST_StartPoint(line)) AS ax, ST_Y(ST_StartPoint(line)) AS ay,
       ST_X(ST_EndPoint(line)) - ST_X(ST_StartPoint(line)) AS dx,
       ST_Y(ST_EndPoint(line)) - ST_Y(ST_StartPoint(line)) AS dy
FROM (
    SELECT traj_id, user_id, t AS t1, lead(t) OVER w AS t2,
           cell_id AS c1, lead(cell_id) OVER w AS c2,
           ST_MakeLine(geom, lead(geom) OVER w) AS line
    FROM {work}.point_cells
    WINDOW w AS (PARTITION BY traj_id ORDER BY t)
) AS s
-- Cells are convex: a segment with both ends in one cell stays inside it. A segment with
-- an end in a gap may cross cells on its way to or from the box's edge.
WHERE t2 IS NOT NULL AND (c1 IS NULL OR c1 IS DISTINCT FROM c2);
