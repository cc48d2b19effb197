-- The size of a prepared MOB window for Python: its objects (persons with a position at
-- some time point) and its time points. Identifiers: work.
SELECT (SELECT count(*) FROM {work}.mob_objects) AS n_objects,
       (SELECT count(*) FROM {work}.mob_time_points) AS n_time_points;
