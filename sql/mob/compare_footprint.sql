-- MOB (seed 003): every published position of every object, for `anonymizers compare`. An
-- object is one person; its region at time point t stands for the last fix at or before t
-- (020_positions.sql), so for the span (t - interval, t] of the manifest's interval.
-- Identifiers: release.
SELECT p.object_id::text AS unit,
       (row_number() OVER (PARTITION BY p.object_id ORDER BY p.t))::integer AS seq,
       1::float8 AS n_persons, p.geom,
       p.t - make_interval(secs => (m.parameters ->> 'interval')::float8)
           + interval '1 microsecond' AS t_start,
       p.t + interval '1 microsecond' AS t_end
FROM {release}.positions AS p
CROSS JOIN {release}.manifest AS m;
