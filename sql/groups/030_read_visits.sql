-- Trajectory groups (seed 004): the window's place sequences for the anonymizer, one row
-- per visit in trajectory and visit order. Identifiers: work.
COPY (SELECT traj_index, person_index, place_id
      FROM {work}.tg_visits
      ORDER BY traj_index, seq) TO STDOUT (FORMAT csv)
