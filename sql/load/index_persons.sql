-- The index of raw.persons' primary key, built on a filled persons table (attaching adopts
-- it). Identifiers: persons.
CREATE UNIQUE INDEX ON {persons} (dataset_id, user_id);
