-- One row of progressive_log (105_generators.sql) per step of progressive generalization:
-- what the step found and did (the metrics report it, metrics/030_progressive.sql).
-- Params: iteration, cells, pairs_below_k, thin_generators, merges, drops,
-- rejected_by_displacement, displacement_avg_m, displacement_max_m, snap_merges.
-- Identifiers: work.
INSERT INTO {work}.progressive_log (iteration, cells, pairs_below_k, thin_generators, merges,
    drops, rejected_by_displacement, displacement_avg_m, displacement_max_m, snap_merges)
VALUES (%(iteration)s, %(cells)s, %(pairs_below_k)s, %(thin_generators)s, %(merges)s,
    %(drops)s, %(rejected_by_displacement)s, %(displacement_avg_m)s, %(displacement_max_m)s,
    %(snap_merges)s)
