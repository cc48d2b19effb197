-- The risk is computed on the sequences of work.anonymized (which know their source); this
-- counts how many sequences differ, as a multiset, from the published {build}.trajectories
-- (0 unless the build and the work schema disagree). Each side is counted per distinct
-- sequence first, and only the distinct work sequences are mapped to published cell ids:
-- at 25M fixes, 238k distinct sequences for 1.9 million rows (mapping every row and two
-- EXCEPT ALL took 20 s, EXPLAIN ANALYZE). The published sequence is a JSON array: the
-- derived one is compared as JSON. Identifiers: work, build.
WITH work_sequences AS (
    SELECT cells, count(*) AS n FROM {work}.anonymized GROUP BY cells
), derived AS (
    SELECT to_jsonb(array_agg(m.release_cell_id ORDER BY u.ord)) AS cells, w.n
    FROM (SELECT cells, n, row_number() OVER () AS id FROM work_sequences) AS w
    CROSS JOIN LATERAL unnest(w.cells) WITH ORDINALITY AS u(cell_id, ord)
    LEFT JOIN {work}.cell_map AS m ON m.cell_id = u.cell_id
    GROUP BY w.id, w.n
), published AS (
    SELECT cells, count(*) AS n FROM {build}.trajectories GROUP BY cells
)
SELECT coalesce(sum(abs(coalesce(d.n, 0) - coalesce(p.n, 0))), 0)::bigint AS mismatched
FROM derived AS d
FULL JOIN published AS p ON p.cells = d.cells;
