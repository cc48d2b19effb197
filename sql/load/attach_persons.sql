-- Attach a dataset's persons to raw.persons, after its raw.datasets row was inserted:
-- the foreign key is checked once for the whole table, the CHECK implies the partition
-- bound, the unique index becomes the primary key's.
-- Params: dataset_id. Identifiers: persons.
ALTER TABLE raw.persons ATTACH PARTITION {persons} FOR VALUES IN (%(dataset_id)s);
