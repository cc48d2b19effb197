-- Register a dataset (same transaction as attaching its points: all or nothing). Its id
-- was drawn from the identity sequence when its points were staged. places_file is NULL
-- for GPS fixes (sql/schema/031_raw_places.sql).
INSERT INTO raw.datasets (dataset_id, name, source_file, source_sha256, persons_file, n_points,
                          n_trajectories, n_persons, t_min, t_max, lon_median, lat_median,
                          load_report, places_file)
OVERRIDING SYSTEM VALUE
VALUES (%(dataset_id)s, %(name)s, %(source_file)s, %(source_sha256)s, %(persons_file)s,
        %(n_points)s, %(n_trajectories)s, %(n_persons)s, %(t_min)s, %(t_max)s,
        %(lon_median)s, %(lat_median)s, %(load_report)s, %(places_file)s);
