-- MOB family, preparation 3/3: the quasi-identifiers of the window's objects (Yarovoy et
-- al. 2009, §3: QID(O) is a set of time points). A QID time t of raw.qids with
-- window_start <= t < window_end falls on time point floor((t - start) / interval) (the
-- point whose interval holds it); two times of one person on one point count once
-- (merged). A QID time point at which the person has no position (not an object of the
-- window, or no trajectory running then) is dropped: there is nothing to link it to.
-- mob_qid_stats (one row) counts them; QIDs outside the window are not read.
-- Re-running replaces the tables. Needs mob_objects and mob_cells (020_positions.sql).
-- Params: dataset_id, window_start, window_end (half-open), interval_s (seconds, > 0).
-- Identifiers: work (the run's work schema).
DROP TABLE IF EXISTS {work}.mob_qids;
DROP TABLE IF EXISTS {work}.mob_qid_stats;

CREATE TABLE {work}.mob_qids (
    object_index integer NOT NULL,
    t_index      integer NOT NULL,
    PRIMARY KEY (object_index, t_index)
);
INSERT INTO {work}.mob_qids (object_index, t_index)
SELECT DISTINCT c.object_index, c.t_index
FROM raw.qids AS q
JOIN {work}.mob_objects AS o USING (user_id)
JOIN {work}.mob_cells AS c
  ON c.object_index = o.object_index
 AND c.t_index = floor(extract(epoch FROM q.t - %(window_start)s::timestamptz)
                       / %(interval_s)s)::integer
WHERE q.dataset_id = %(dataset_id)s
  AND q.t >= %(window_start)s::timestamptz
  AND q.t < %(window_end)s::timestamptz
ORDER BY c.object_index, c.t_index;
ANALYZE {work}.mob_qids;

-- in_window: rows of raw.qids in the window; time_points: distinct (person, time point) of
-- them; merged = in_window - time_points; dropped = time_points - kept.
CREATE TABLE {work}.mob_qid_stats AS
WITH in_window AS (
    SELECT q.user_id,
           floor(extract(epoch FROM q.t - %(window_start)s::timestamptz)
                 / %(interval_s)s)::integer AS t_index
    FROM raw.qids AS q
    WHERE q.dataset_id = %(dataset_id)s
      AND q.t >= %(window_start)s::timestamptz
      AND q.t < %(window_end)s::timestamptz
),
counts AS (
    SELECT count(*) AS in_window,
           count(DISTINCT (user_id, t_index)) AS time_points,
           (SELECT count(*) FROM {work}.mob_qids) AS kept,
           (SELECT count(DISTINCT object_index) FROM {work}.mob_qids) AS objects_with_qid
    FROM in_window
)
SELECT in_window, time_points, in_window - time_points AS merged,
       time_points - kept AS dropped, kept, objects_with_qid
FROM counts;

SELECT json_build_object('qids_in_window', in_window, 'qid_time_points', time_points,
                         'qids_merged', merged, 'qids_dropped', dropped, 'qids', kept,
                         'objects_with_qid', objects_with_qid) AS counts
FROM {work}.mob_qid_stats;
