-- Trajectory groups (seed 004): the published demographic classes' rows (ids and count
-- interval of the interval filter, §4.2: n_lo = k + size * floor((n - k) / size)), in
-- random order; the step then adds each attribute's hidden bounds
-- (072_class_bounds.sql). Params: k, size. Identifiers: work, build.
INSERT INTO {build}.demographic_classes (group_id, class_id, n_lo, n_hi)
SELECT d.group_id, d.class_id, f.n_lo, f.n_lo + %(size)s - 1
FROM {work}.tg_classes AS c
JOIN {work}.tg_class_ids AS d USING (group_index, class_index)
CROSS JOIN LATERAL (SELECT %(k)s + %(size)s * ((c.n_persons - %(k)s) / %(size)s) AS n_lo) AS f
ORDER BY random();
