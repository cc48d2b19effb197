-- Progressive generalization (methods kam_cut, kam_rec; seed 000 Algorithm 3): one series
-- point per iteration of {work}.progressive_log, and the number of cells before the first
-- and after the last merge. Row i of the log describes the cells at the start of iteration
-- i and the merges / drops decided on them; the last row decided nothing. The log's
-- largest displacement (displacement_max_m) is not published: it is one fix's distance
-- (privacy rule 3); the average is over every fix of the window.
-- Identifiers: work, build.
INSERT INTO {build}.metric_series (series, x, value, unit, description)
SELECT s.series, l.iteration, s.value, s.unit, s.description
FROM {work}.progressive_log AS l
CROSS JOIN LATERAL (VALUES
    ('progressive.cells', l.cells::float8, 'count',
     'Cells at the start of iteration x of progressive generalization'),
    ('progressive.pairs_below_k', l.pairs_below_k::float8, 'count',
     'Neighbouring cell pairs whose traffic is below k at iteration x'),
    ('progressive.thin_generators', l.thin_generators::float8, 'count',
     'Cells whose generator is supported by fewer than k at iteration x'),
    ('progressive.merges', l.merges::float8, 'count', 'Cell pairs merged at iteration x'),
    ('progressive.drops', l.drops::float8, 'count', 'Generators dropped at iteration x'),
    ('progressive.rejected_by_displacement', l.rejected_by_displacement::float8, 'count',
     'Merges refused at iteration x because the merged area would exceed MaxDisplacement'),
    ('progressive.displacement_avg_m', l.displacement_avg_m, 'm',
     'Average distance from a fix to the generator of its cell at the start of iteration x')
) AS s(series, value, unit, description);

INSERT INTO {build}.metrics (name, value, unit, description)
SELECT * FROM (VALUES
    ('cells_before_generalization',
     (SELECT cells FROM {work}.progressive_log ORDER BY iteration LIMIT 1)::float8, 'count',
     'Voronoi cells of the clustering, before progressive generalization'),
    ('cells_after_generalization',
     (SELECT cells FROM {work}.progressive_log ORDER BY iteration DESC LIMIT 1)::float8, 'count',
     'Cells after progressive generalization (the tessellation the trajectories use)'),
    ('progressive_iterations',
     (SELECT max(iteration) FROM {work}.progressive_log)::float8, 'iterations',
     'Iterations of progressive generalization that changed the cells (the x range of the progressive.* series; not a count of persons or of anything they did)')
) AS m(name, value, unit, description);
