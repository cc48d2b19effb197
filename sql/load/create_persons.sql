-- A fresh, unattached table for one dataset's persons, filled by COPY while its points
-- load; attach_persons.sql makes it a partition of raw.persons when publishing.
-- The CHECK lets that ATTACH skip its scan.
-- Params: dataset_id. Identifiers: persons.
CREATE TABLE {persons} (
    LIKE raw.persons INCLUDING DEFAULTS,
    CONSTRAINT in_dataset CHECK (dataset_id = %(dataset_id)s)
);
