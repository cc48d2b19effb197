-- Aggregates: exact figures of the built release for its metrics (the shared writer
-- interval-filters every count and divides filtered counts): cells with at least one
-- person and those published, cells a primary suppression dropped (fewer than k) and the
-- rest dropped by the secondary suppression, whole bins and published bin totals, the
-- window's person-bins (or moves) and those in a published cell, the persons of the window
-- and those counted in at least one published cell.
-- Params: k. Identifiers: work.
SELECT (SELECT count(*) FROM {work}.ag_cells) AS cells,
       (SELECT count(*) FROM {work}.ag_published_cells) AS cells_published,
       (SELECT count(*) FROM {work}.ag_cells WHERE n < %(k)s) AS cells_primary,
       (SELECT count(*) FROM {work}.ag_cells AS c
        WHERE c.n >= %(k)s
          AND c.cell_index NOT IN (SELECT cell_index FROM {work}.ag_published_cells))
           AS cells_secondary,
       (SELECT count(*) FROM {work}.ag_bins) AS bins,
       (SELECT count(*) FROM {work}.ag_published_bins) AS bins_published,
       (SELECT coalesce(sum(n), 0) FROM {work}.ag_cells) AS members,
       (SELECT coalesce(sum(c.n), 0) FROM {work}.ag_cells AS c
        JOIN {work}.ag_published_cells USING (cell_index)) AS members_published,
       (SELECT count(DISTINCT user_id) FROM {work}.ag_fixes) AS persons,
       (SELECT count(DISTINCT m.user_id) FROM {work}.ag_cell_members AS m
        JOIN {work}.ag_published_cells USING (cell_index)) AS persons_published;
