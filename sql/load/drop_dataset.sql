-- Remove a dataset (its points and persons partitions, registry row). Used by --replace
-- inside the transaction that loads the new version, so readers see the old or the new,
-- never none. A dataset loaded without persons has no persons partition. Its places
-- (raw.places) and QIDs (raw.qids) go with the registry row (ON DELETE CASCADE).
-- Params: dataset_id. Identifiers: partition, persons.
ALTER TABLE raw.points DETACH PARTITION {partition};
DROP TABLE {partition};
DROP TABLE IF EXISTS {persons};
DELETE FROM raw.datasets WHERE dataset_id = %(dataset_id)s;
