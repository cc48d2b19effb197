-- Receives the k-anonymous sequences computed in Python: each distinct published sequence
-- once (published_patterns) and, for each trajectory that publishes one, which
-- (published_sources), both filled by COPY, then joined by 077_fill_anonymized.sql.
-- source_traj_id stays in the work schema: it never reaches the release.
-- Identifiers: work.
DROP TABLE IF EXISTS {work}.anonymized;
CREATE TABLE {work}.anonymized (
    anon_id        integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    source_traj_id text NOT NULL,
    cells          integer[] NOT NULL CHECK (cardinality(cells) > 0)
);
DROP TABLE IF EXISTS pg_temp.published_patterns;
CREATE TEMP TABLE published_patterns (
    pattern_no integer PRIMARY KEY,
    cells      integer[] NOT NULL
) ON COMMIT DROP;
DROP TABLE IF EXISTS pg_temp.published_sources;
CREATE TEMP TABLE published_sources (
    traj_no    integer NOT NULL,
    pattern_no integer NOT NULL
) ON COMMIT DROP;
