-- The cells of every generalized trajectory, one after the other: in traj_id order (the
-- order of the trajectory numbers of 068_sequence_numbers.sql, whose visit counts say
-- where each trajectory's cells end), each in visit order (the index of 050_visits.sql).
-- Read into Arrow by anonymizers/db/arrow_reads.py (16 million cells at 25M fixes:
-- psycopg's row-by-row COPY took 10.4 s). Identifiers: work.
SELECT cell_id FROM {work}.visits ORDER BY traj_id, visit_no
