-- After a membership update: the segments recomputed that {work}.segments does not hold
-- yet (an end moved, and they now run between two cells) join it, so that later updates
-- find them too. A kept segment whose ends are now in one cell stays: updates check its
-- ends again before crossing it. Identifiers: work.
INSERT INTO {work}.segments (seg_id, traj_id, user_id, t1, t2, c1, c2, line, ax, ay, dx, dy)
SELECT r.seg_id, r.traj_id, r.user_id, r.t1, r.t2, r.c1, r.c2, r.line, r.ax, r.ay, r.dx, r.dy
FROM {work}.recross AS r
WHERE NOT EXISTS (SELECT 1 FROM {work}.segments AS s
                  WHERE s.traj_id = r.traj_id AND s.t1 = r.t1);
