-- progressive_generalization starts from the clustering's generators. They are saved by
-- the cluster step; a re-run of a step that already succeeded restores them, so clearing
-- the task in Airflow gives the same release, not a further-merged one.
-- Params: save (true: save the current generators; false: restore them). Identifiers: work.
CREATE TABLE IF NOT EXISTS {work}.generators_initial AS
SELECT gen_id, x, y, n_points, n_persons FROM {work}.generators WITH NO DATA;
DELETE FROM {work}.generators_initial WHERE %(save)s;
INSERT INTO {work}.generators_initial
SELECT gen_id, x, y, n_points, n_persons FROM {work}.generators WHERE %(save)s;
DELETE FROM {work}.generators WHERE NOT %(save)s;
INSERT INTO {work}.generators (gen_id, x, y, n_points, n_persons)
SELECT gen_id, x, y, n_points, n_persons FROM {work}.generators_initial WHERE NOT %(save)s;
