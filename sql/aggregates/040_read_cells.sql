-- Aggregates: the true counts the suppression step reads: every cell (its index, bin and
-- count) and, after a blank result, every bin. Identifiers: work.
SELECT cell_index, bin, n FROM {work}.ag_cells ORDER BY cell_index;
