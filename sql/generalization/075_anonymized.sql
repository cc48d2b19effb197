-- Receives the k-anonymous sequences computed in Python (filled by COPY).
-- source_traj_id stays in the work schema: it never reaches the release.
-- Identifiers: work.
DROP TABLE IF EXISTS {work}.anonymized;
CREATE TABLE {work}.anonymized (
    anon_id        integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    source_traj_id text NOT NULL,
    cells          integer[] NOT NULL CHECK (cardinality(cells) > 0)
);
