-- Trajectory groups (seed 004): the work tables the anonymizer's Python steps fill (by
-- COPY), all private to the run. Indexes refer to tg_trajectories / tg_visits.
--   tg_groups, tg_group_places: the groups found (§4.3), exact counts, sequence by pos;
--   tg_assignment: which visits seq_start .. seq_stop - 1 of which trajectory spell which
--     group's sequence and are counted in it (overlapping: every occurrence; nonoverlapping:
--     the greedy's moves, Algorithm 4, never two overlapping ranges of one trajectory);
--   tg_od, tg_od_places, tg_od_members: common origin / destination groups (§4.3.3),
--     their places (a centre and its neighbours) and who is in them;
--   tg_classes, tg_class_members: demographic classes per group (§4.4), the unhidden box
--     (lower/upper, one entry per attribute) and the hidden one that is published (§4.4.5);
--   tg_class_summary: classes not published because their hidden box held fewer than k.
-- Identifiers: work.
DROP TABLE IF EXISTS {work}.tg_groups, {work}.tg_group_places, {work}.tg_assignment,
    {work}.tg_od, {work}.tg_od_places, {work}.tg_od_members, {work}.tg_classes,
    {work}.tg_class_members, {work}.tg_class_summary;
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
CREATE TABLE {work}.tg_classes (
    group_index  integer NOT NULL,
    class_index  integer NOT NULL,
    lower        float8[] NOT NULL,
    upper        float8[] NOT NULL,
    hidden_lower float8[] NOT NULL,
    hidden_upper float8[] NOT NULL,
    n_persons    integer NOT NULL,
    PRIMARY KEY (group_index, class_index)
);
CREATE TABLE {work}.tg_class_members (
    group_index  integer NOT NULL,
    class_index  integer NOT NULL,
    person_index integer NOT NULL
);
CREATE TABLE {work}.tg_class_summary (
    suppressed_by_hiding integer NOT NULL
);
