-- Trajectory groups (seed 004): who is in which group, for the demographic anonymizer:
-- the distinct (group, person) pairs of the private assignment. Identifiers: work.
-- DISTINCT ON sorts: a plain DISTINCT was hashed under an estimate of a tenth of the pairs
-- and spilled for over 15 minutes at 25M fixes (9.3 million pairs; sorted: 17 s).
COPY (SELECT DISTINCT ON (group_index, person_index) group_index, person_index
      FROM {work}.tg_assignment
      ORDER BY 1, 2) TO STDOUT (FORMAT csv)
