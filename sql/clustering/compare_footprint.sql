-- Clustering (seeds 001, 002): every region of every published group, for `anonymizers
-- compare`. A group stands for its published n_persons. MLA regions hold a [t_start, t_end)
-- interval; TCAA publishes instants at synchronized time points one `interval` apart, each
-- standing for the half interval on either side.
-- Identifiers: release.
SELECT r.group_id::text AS unit, r.seq, g.n_persons::float8 AS n_persons, r.geom,
       CASE WHEN r.t_end > r.t_start THEN r.t_start
            ELSE r.t_start - make_interval(secs => (m.parameters ->> 'interval')::float8 / 2)
       END AS t_start,
       CASE WHEN r.t_end > r.t_start THEN r.t_end
            ELSE r.t_start + make_interval(secs => (m.parameters ->> 'interval')::float8 / 2)
       END AS t_end
FROM {release}.group_regions AS r
JOIN {release}.groups AS g USING (group_id)
CROSS JOIN {release}.manifest AS m;
