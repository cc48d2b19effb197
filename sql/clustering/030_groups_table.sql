-- The anonymizer's private assignment of pieces to groups (written by COPY; never
-- published: a release shows only each group's generalized trajectory and its size).
-- Re-running replaces it. Identifiers: work.
DROP TABLE IF EXISTS {work}.cl_groups;
CREATE TABLE {work}.cl_groups (
    piece_id integer PRIMARY KEY REFERENCES {work}.cl_pieces,
    group_index integer NOT NULL
);
