-- After a membership update: {work}.segments again holds every segment whose ends lie in
-- two cells or in a gap, with its ends' current cells (125_membership_update.sql relies on
-- it). Only the segments at a fix that changed cell (moved_ends) have new ends' cells:
-- theirs are replaced by those of them still between two cells. Identifiers: work.
DELETE FROM {work}.segments AS s
USING {work}.moved_ends AS m
WHERE s.traj_id = m.traj_id AND s.t1 = m.t1;
INSERT INTO {work}.segments (traj_id, user_id, t1, t2, c1, c2, line, ax, ay, dx, dy)
SELECT r.traj_id, r.user_id, r.t1, r.t2, r.c1, r.c2, r.line, r.ax, r.ay, r.dx, r.dy
FROM {work}.recross AS r
JOIN {work}.moved_ends AS m ON m.traj_id = r.traj_id AND m.t1 = r.t1;
