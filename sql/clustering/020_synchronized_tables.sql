-- Empty tables for the synchronized pieces (written by COPY from Python; seed 002
-- Algorithm 1 on the time grid of the window): a piece is one person's trajectory over one
-- time slice, one piece per (person, slice); its positions are at the slice's time points
-- seq = 0 .. n - 1, time window_start + slice * slice_seconds + seq * interval.
-- Re-running replaces them. Identifiers: work.
DROP TABLE IF EXISTS {work}.cl_groups;
DROP TABLE IF EXISTS {work}.cl_positions;
DROP TABLE IF EXISTS {work}.cl_pieces;
CREATE TABLE {work}.cl_pieces (
    piece_id     integer PRIMARY KEY,
    person_index integer NOT NULL,
    traj_index   integer NOT NULL,
    slice        integer NOT NULL,
    UNIQUE (person_index, slice)
);
CREATE TABLE {work}.cl_positions (
    piece_id integer NOT NULL REFERENCES {work}.cl_pieces,
    seq      integer NOT NULL,
    x        float8 NOT NULL,
    y        float8 NOT NULL,
    PRIMARY KEY (piece_id, seq)
);
