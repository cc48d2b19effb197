-- What a membership update touched, for the step's log (after 128_crossings.sql).
-- Identifiers: work.
SELECT (SELECT count(*) FROM {work}.changed_cells) AS changed_cells,
       (SELECT count(*) FROM {work}.candidates) AS candidates,
       (SELECT count(*) FROM {work}.moved_points) AS moved_points,
       (SELECT count(*) FROM {work}.moved_ends) AS rebuilt_segments,
       (SELECT count(*) FROM {work}.recross) AS recrossed_segments,
       (SELECT count(*) FROM {work}.recross_full) AS fully_recrossed_segments;
