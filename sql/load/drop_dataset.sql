-- Remove a dataset (its partition, persons and registry row). Used by --replace inside
-- the transaction that loads the new version, so readers see the old or the new, never none.
-- Params: dataset_id. Identifiers: partition.
ALTER TABLE raw.points DETACH PARTITION {partition};
DROP TABLE {partition};
DELETE FROM raw.datasets WHERE dataset_id = %(dataset_id)s;
