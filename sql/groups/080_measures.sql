-- Trajectory groups (seed 004): the figures of a release's metrics, one row, exact (the
-- shared writer filters counts, and the counts of every ratio before it divides): the
-- input's and the groups' total lengths for the ratio of eq. 33, the groups' places and
-- their number for the mean length, visits and persons covered, demographic classes (and
-- those boundary hiding left below k).
-- Identifiers: work, build.
WITH published AS (
    SELECT g.group_index, g.n_persons, g.n_trajectories,
           (SELECT count(*) FROM {work}.tg_group_places AS p
            WHERE p.group_index = g.group_index) AS length
    FROM {work}.tg_groups AS g JOIN {work}.tg_group_ids USING (group_index)
), covered AS (  -- DISTINCT ON sorts (a hashed DISTINCT spilled, 046_read_group_persons)
    SELECT DISTINCT ON (a.traj_index, v.seq) a.traj_index, v.seq
    FROM {work}.tg_assignment AS a
    JOIN {work}.tg_group_ids USING (group_index)
    JOIN {work}.tg_visits AS v
      ON v.traj_index = a.traj_index AND v.seq >= a.seq_start AND v.seq < a.seq_stop
    ORDER BY a.traj_index, v.seq
)
SELECT (SELECT count(*) FROM {work}.tg_visits) AS visits_in,
       (SELECT count(DISTINCT person_index) FROM {work}.tg_trajectories) AS persons_in,
       (SELECT coalesce(sum(length * n_trajectories), 0) FROM published) AS group_visits,
       (SELECT coalesce(sum(length), 0) FROM published) AS length_sum,
       (SELECT count(*) FROM published) AS groups,
       (SELECT count(*) FROM covered) AS visits_covered,
       (SELECT count(DISTINCT a.person_index)
        FROM {work}.tg_assignment AS a JOIN {work}.tg_group_ids USING (group_index))
           AS persons_published,
       (SELECT count(*) FROM {build}.od_groups) AS od_groups,
       (SELECT count(*) FROM {build}.demographic_classes) AS classes,
       (SELECT count(DISTINCT group_id) FROM {build}.demographic_classes) AS groups_with_classes,
       (SELECT count(*) FROM {build}.places) AS places,
       (SELECT coalesce(sum(suppressed_by_hiding), 0) FROM {work}.tg_class_summary)
           AS classes_suppressed_by_hiding;
