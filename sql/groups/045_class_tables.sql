-- Trajectory groups (seed 004): the work tables of the demographic classes, filled by
-- COPY, private to the run; run at the start of the step that fills them (a re-run starts
-- from empty tables):
--   tg_classes, tg_class_members: demographic classes per group (§4.4), the unhidden box
--     (lower/upper, one entry per attribute) and the hidden one that is published (§4.4.5);
--   tg_class_summary: classes not published because their hidden box held fewer than k.
-- Identifiers: work.
DROP TABLE IF EXISTS {work}.tg_classes, {work}.tg_class_members, {work}.tg_class_summary;
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
