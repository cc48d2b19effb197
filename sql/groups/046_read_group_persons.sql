-- Trajectory groups (seed 004): who is in which group, for the demographic anonymizer:
-- the distinct (group, person) pairs of the private assignment. Identifiers: work.
COPY (SELECT DISTINCT group_index, person_index
      FROM {work}.tg_assignment
      ORDER BY 1, 2) TO STDOUT (FORMAT csv)
