-- What the anonymize step writes (COPY from Python; a re-run starts afresh):
-- mob_published: the objects that are published (the others were suppressed: they could
-- not be hidden among k), blank: published with no location at any time point (presence
-- hidden: the persons that could not be hidden among k, and more to make k); mob_sets: the
-- MOB set S(O) of every object that has one (seed 003 §5.1: its anonymization group or
-- hiding set, the object itself included), the groups the release was made on;
-- mob_regions: the region of every published object at every time point it has a
-- position: its equivalence class (NULL: its own cell) and the inclusive cell ranges of
-- the class's least upper bound. Identifiers: work.
DROP TABLE IF EXISTS {work}.mob_published;
DROP TABLE IF EXISTS {work}.mob_sets;
DROP TABLE IF EXISTS {work}.mob_regions;
CREATE TABLE {work}.mob_published (
    object_index integer PRIMARY KEY,
    blank        boolean NOT NULL
);
CREATE TABLE {work}.mob_sets (
    object_index integer NOT NULL,
    member_index integer NOT NULL,
    PRIMARY KEY (object_index, member_index)
);
CREATE TABLE {work}.mob_regions (
    object_index integer NOT NULL,
    t_index      integer NOT NULL,
    class_id     integer,
    x0 integer NOT NULL, y0 integer NOT NULL, x1 integer NOT NULL, y1 integer NOT NULL,
    PRIMARY KEY (object_index, t_index)
);
