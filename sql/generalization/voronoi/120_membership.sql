-- Each fix's cell on the current cells (on a shared edge, the smallest cell id: the same
-- rule as the verifier), in SQL: with 126_segments.sql and 128_crossings.sql, the
-- reference the tests hold fix_cells.py to (progressive generalization keeps the fixes'
-- cells in memory and writes the visits and the metrics' sums from them). The pipeline
-- does not run it; the tests and bench_tessellation_pipeline.py do.
-- A fix outside the clip box (110_voronoi_cells.sql) lies in no cell: it is a gap, kept
-- here with a NULL cell.
-- Where: each fix is looked up on a lattice of squares over the clip box (about 1024 per
-- cell), by arithmetic and one hash join. A square that meets one cell only, which covers
-- it, gives its fixes that cell: a fix in it lies in that cell and in no other. The fixes
-- of the other squares (along cell edges) are tested against the cells that square meets,
-- and get the smallest id of those holding them. Squares are enlarged by a millimetre, so
-- a fix that rounding puts into the next square still lies in the square it is given.
-- (5M-fix city: 3.7 s for the squares and 16.7 s for the fixes, against 35 s for the cells
-- probing the fixes' GiST index and a sort of every (fix, cell) for the smallest id; 25M:
-- 4.8 + 69.2 s against 210 s, and the gaps' anti-join, 15.5 s, is gone. The same cell for
-- every fix. Most fixes need no polygon, and no fix is sorted.) The hash join keeps
-- the fixes in the order of the points table, which follows trajectories: merge joins and
-- parallel plans, which would scramble it, are off for that statement.
-- Produces {work}.point_cells. Identifiers: work.
SET LOCAL work_mem = '256MB';

DROP TABLE IF EXISTS {work}.membership_lattice;
CREATE TABLE {work}.membership_lattice AS
SELECT b.x_min, b.y_min, s.side, ST_SRID(b.geom) AS srid,
       floor((b.x_max - b.x_min) / s.side)::integer AS last_i,
       floor((b.y_max - b.y_min) / s.side)::integer AS last_j
FROM {work}.clip_box AS b
CROSS JOIN LATERAL (
    SELECT sqrt((b.x_max - b.x_min) * (b.y_max - b.y_min)
                / (1024 * (SELECT count(*) FROM {work}.cells))) AS side
) AS s;
ANALYZE {work}.membership_lattice;
DROP TABLE IF EXISTS pg_temp.membership_squares;
CREATE TEMP TABLE membership_squares ON COMMIT DROP AS
WITH squares AS (
    SELECT i, j, ST_MakeEnvelope(l.x_min + i * l.side - 0.001, l.y_min + j * l.side - 0.001,
                                 l.x_min + (i + 1) * l.side + 0.001,
                                 l.y_min + (j + 1) * l.side + 0.001, l.srid) AS geom
    FROM {work}.membership_lattice AS l
    CROSS JOIN generate_series(0, l.last_i) AS i
    CROSS JOIN generate_series(0, l.last_j) AS j
), met AS (
    SELECT s.i, s.j, s.geom, array_agg(c.cell_id ORDER BY c.cell_id) AS cells
    FROM squares AS s
    JOIN {work}.cells AS c ON ST_Intersects(c.geom, s.geom)
    GROUP BY s.i, s.j, s.geom
)
SELECT m.i, m.j, m.cells,
       CASE WHEN ST_Covers(c.geom, m.geom) THEN c.cell_id END AS sole_cell
FROM met AS m
LEFT JOIN {work}.cells AS c ON cardinality(m.cells) = 1 AND c.cell_id = m.cells[1];
ANALYZE membership_squares;

-- The reference's view over this table (126_segments.sql), where a test made it.
DROP VIEW IF EXISTS {work}.memberships;
DROP TABLE IF EXISTS {work}.point_cells;
SET LOCAL enable_mergejoin = off;
SET LOCAL max_parallel_workers_per_gather = 0;
-- A fix in no square that meets a cell, or in none of its square's cells, is a gap: NULL.
CREATE TABLE {work}.point_cells AS
SELECT p.traj_id, p.user_id, p.t, p.geom,
       coalesce(s.sole_cell, (SELECT min(c.cell_id) FROM {work}.cells AS c
                              WHERE c.cell_id = ANY (s.cells)
                                AND ST_Intersects(c.geom, p.geom))) AS cell_id
FROM {work}.points AS p
CROSS JOIN {work}.membership_lattice AS l
LEFT JOIN membership_squares AS s
  ON s.i = floor((ST_X(p.geom) - l.x_min) / l.side)::integer
 AND s.j = floor((ST_Y(p.geom) - l.y_min) / l.side)::integer;
RESET enable_mergejoin;  -- for the rest of the step's transaction
RESET max_parallel_workers_per_gather;
-- No index by cell: nothing looks fixes up by cell (the metrics hash them by cell); the
-- attacked trajectories' first fixes are looked up by trajectory.
CREATE INDEX ON {work}.point_cells (traj_id, t);
-- Analysed now, not whenever autovacuum gets to it: the metrics plan on this table's
-- statistics.
ANALYZE {work}.point_cells;
