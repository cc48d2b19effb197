-- The prepared fixes for Python, by trajectory and time (one COPY, CSV).
-- Identifiers: work.
COPY (SELECT traj_index, person_index, s, x, y FROM {work}.cl_fixes
      ORDER BY traj_index, s) TO STDOUT (FORMAT csv);
