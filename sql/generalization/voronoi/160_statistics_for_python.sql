-- Per cell, what the merge decisions in Python take from the database (the fixes' sums
-- come from the cells kept in memory, fix_cells.py): the generator, the persons it was
-- computed from, and near_owners: the distinct persons with a fix within `reach` (the
-- radius r) of the generator, the rule the verifier checks on every data-derived
-- generator, counted up to `enough` (k): the planner only asks whether it reaches k (progressive.py), so the
-- count stops there. The fixes are read nearest first from the points' GiST index, and
-- where a place is busy the first few hundred hold k persons. (25M-fix city, 436 first
-- generators: 183 s for count(DISTINCT) over every fix within r of each.) A generator
-- with fewer than k persons within r reads all its fixes within r, as before, and its
-- count is exact.
-- A generator keeps its position for as long as it lives, so near_owners is computed
-- once per generator and kept in {work}.near_owners, keyed by id and position (whole
-- T-Drive: 1.1 s per iteration for all generators).
-- Params: reach, enough. Identifiers: work.
-- Built at the first step: the fixes nearest a generator are read through it.
CREATE INDEX IF NOT EXISTS points_geom_idx ON {work}.points USING gist (geom);
CREATE OR REPLACE FUNCTION pg_temp.owners_near(centre geometry, reach double precision,
                                               enough integer) RETURNS integer
LANGUAGE plpgsql STABLE AS $$
DECLARE
    seen text[] := ARRAY[]::text[];
    owner text;
BEGIN
    FOR owner IN SELECT p.user_id FROM {work}.points AS p
                 WHERE ST_DWithin(p.geom, centre, reach)
                 ORDER BY p.geom <-> centre LOOP
        IF NOT owner = ANY (seen) THEN
            seen := seen || owner;
            EXIT WHEN cardinality(seen) >= enough;
        END IF;
    END LOOP;
    RETURN cardinality(seen);
END
$$;
CREATE TABLE IF NOT EXISTS {work}.near_owners (
    cell_id integer, centroid geometry, near_owners bigint
);
INSERT INTO {work}.near_owners (cell_id, centroid, near_owners)
SELECT c.cell_id, c.centroid, pg_temp.owners_near(c.centroid, %(reach)s, %(enough)s)
FROM {work}.cells AS c
WHERE NOT EXISTS (SELECT 1 FROM {work}.near_owners AS n
                  WHERE n.cell_id = c.cell_id AND n.centroid ~= c.centroid);

SELECT c.cell_id, c.generator_persons, ST_X(c.centroid) AS centroid_x,
       ST_Y(c.centroid) AS centroid_y, n.near_owners
FROM {work}.cells AS c
JOIN {work}.near_owners AS n ON n.cell_id = c.cell_id AND n.centroid ~= c.centroid
ORDER BY c.cell_id;
