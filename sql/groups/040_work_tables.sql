-- Trajectory groups (seed 004): the work tables the anonymizer's Python steps fill (by
-- COPY), all private to the run. Indexes refer to tg_trajectories / tg_visits.
--   tg_groups, tg_group_places: the groups found (§4.3), exact counts, sequence by pos;
--   tg_assignment: which visits seq_start .. seq_stop - 1 of which trajectory spell which
--     group's sequence and are counted in it (overlapping: every occurrence; nonoverlapping:
--     the greedy's moves, Algorithm 4, never two overlapping ranges of one trajectory);
--   tg_od, tg_od_places, tg_od_members: common origin / destination groups (§4.3.3),
--     their places (a centre and its neighbours) and who is in them
-- (the demographic classes' tables are 045_class_tables.sql). Run at the start of the step
-- that fills them, so a re-run starts from empty tables.
-- Identifiers: work.
DROP TABLE IF EXISTS {work}.tg_groups, {work}.tg_group_places, {work}.tg_assignment,
    {work}.tg_od, {work}.tg_od_places, {work}.tg_od_members;
CREATE TABLE {work}.tg_groups (
    group_index    integer PRIMARY KEY,
    n_persons      integer NOT NULL,
    n_trajectories integer NOT NULL
);
CREATE TABLE {work}.tg_group_places (
    group_index integer NOT NULL,
    pos         integer NOT NULL,
    place_id    text NOT NULL,
    PRIMARY KEY (group_index, pos)
);
CREATE TABLE {work}.tg_assignment (
    group_index  integer NOT NULL,
    traj_index   integer NOT NULL,
    person_index integer NOT NULL,
    seq_start    integer NOT NULL,
    seq_stop     integer NOT NULL
);
CREATE TABLE {work}.tg_od (
    od_index       integer PRIMARY KEY,
    group_index    integer NOT NULL,
    is_origin      boolean NOT NULL,
    n_persons      integer NOT NULL,
    n_trajectories integer NOT NULL
);
CREATE TABLE {work}.tg_od_places (
    od_index integer NOT NULL,
    place_id text NOT NULL,
    PRIMARY KEY (od_index, place_id)
);
CREATE TABLE {work}.tg_od_members (
    od_index     integer NOT NULL,
    traj_index   integer NOT NULL,
    person_index integer NOT NULL
);
