-- anonymizers compare, 2/4: the random range queries (filled by COPY) and their true answer,
-- the distinct persons with a fix inside the box during [t_start, t_end). Every box is
-- asked twice: over a random span, and over the whole window (whole_window), which a
-- release that publishes no time can answer as well as any. The same queries are asked of
-- every release of the comparison.
DROP TABLE IF EXISTS pg_temp.compare_queries;
CREATE TEMP TABLE compare_queries (
    query_id integer PRIMARY KEY,
    box      geometry NOT NULL,
    t_start  timestamptz NOT NULL,
    t_end    timestamptz NOT NULL,
    whole_window boolean NOT NULL,
    truth    integer,
    span     geometry
);
