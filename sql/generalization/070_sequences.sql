-- The cells of every generalized trajectory, one after the other: in traj_id order (the
-- order of the trajectory numbers of 068_sequence_numbers.sql, whose visit counts say
-- where each trajectory's cells end), each in visit order (the index of 050_visits.sql).
-- Identifiers: work.
COPY (
    SELECT cell_id FROM {work}.visits ORDER BY traj_id, visit_no
) TO STDOUT (FORMAT csv)
