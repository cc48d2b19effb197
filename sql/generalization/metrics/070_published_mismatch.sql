-- The risk is computed on the sequences of work.anonymized (which know their source); this
-- counts how many sequences differ, as a multiset, from the published {build}.trajectories
-- (0 unless the build and the work schema disagree). Identifiers: work, build.
WITH derived AS (
    SELECT array_agg(m.release_cell_id ORDER BY u.ord) AS cells
    FROM {work}.anonymized AS a
    CROSS JOIN LATERAL unnest(a.cells) WITH ORDINALITY AS u(cell_id, ord)
    LEFT JOIN {work}.cell_map AS m ON m.cell_id = u.cell_id
    GROUP BY a.anon_id
)
SELECT (SELECT count(*) FROM (SELECT cells FROM derived
                              EXCEPT ALL SELECT cells FROM {build}.trajectories) AS extra)
     + (SELECT count(*) FROM (SELECT cells FROM {build}.trajectories
                              EXCEPT ALL SELECT cells FROM derived) AS missing);
