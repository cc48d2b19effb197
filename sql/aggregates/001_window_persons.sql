-- Aggregates, before a run: the distinct persons with a fix in the window (fewer than k:
-- nothing could be published), and whether the dataset was loaded with places.
-- Params: dataset_id, window_start, window_end.
SELECT (SELECT count(DISTINCT user_id) FROM raw.points
        WHERE dataset_id = %(dataset_id)s
          AND t >= %(window_start)s::timestamptz AND t < %(window_end)s::timestamptz)
           AS persons,
       EXISTS (SELECT 1 FROM raw.places WHERE dataset_id = %(dataset_id)s) AS has_places;
