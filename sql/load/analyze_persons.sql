-- Statistics of a dataset's persons, once committed (see analyze_leaf.sql).
-- Identifiers: persons.
ANALYZE {persons};
