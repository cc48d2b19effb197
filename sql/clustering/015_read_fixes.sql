-- The prepared fixes before %(end)s seconds from the window start (the whole slices or
-- time bins), by trajectory and time. Read into Arrow by anonymizers/db/arrow_reads.py
-- (cl_fixes was committed by prepare_fixes). Params: end. Identifiers: work.
SELECT traj_index, person_index, s, x, y FROM {work}.cl_fixes
WHERE s < %(end)s
ORDER BY traj_index, s
