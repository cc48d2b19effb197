-- Trajectory groups (seed 004): every place of every published group, for `anonymizers
-- compare`. A group stands for its published count n_lo (the interval filter's lower end);
-- the release publishes no time (t_start, t_end NULL).
-- places is a JSON array of place names. Identifiers: release.
SELECT g.group_id::text AS unit, u.ord::integer AS seq, g.n_lo::float8 AS n_persons, p.geom,
       NULL::timestamptz AS t_start, NULL::timestamptz AS t_end
FROM {release}.groups AS g
CROSS JOIN LATERAL jsonb_array_elements_text(g.places) WITH ORDINALITY AS u(place_id, ord)
JOIN {release}.places AS p ON p.place_id = u.place_id;
