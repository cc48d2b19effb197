-- 030_qids: personal quasi-identifiers of the MOB family (Yarovoy et al. 2009, §3): for a
-- person of a dataset, the time points at which an attacker may know where the person was.
-- QID(O) is a set of timestamps, one row per (person, time). Loaded from a file or generated
-- by anonymizers.loading.qids; read by sql/mob/030_qids.sql. Safe to re-run.
--
-- Private like the rest of raw (privacy rule 6): a QID says when someone was observed by
-- an attacker, so analyst reads none of it (998_post.sql revokes raw from PUBLIC; this file
-- revokes again so that applying it alone, after 998, leaves nothing granted).
--
-- ON DELETE CASCADE: QIDs refer to one version of a dataset's data. `load --replace` deletes
-- the old raw.datasets row inside its publishing transaction (sql/load/drop_dataset.sql),
-- and the new version has a new dataset_id, so the old QIDs go with the old data; the
-- operator loads or generates QIDs again for the new version.
CREATE TABLE IF NOT EXISTS raw.qids (
    dataset_id integer NOT NULL REFERENCES raw.datasets ON DELETE CASCADE,
    user_id    text NOT NULL,
    t          timestamptz NOT NULL,
    PRIMARY KEY (dataset_id, user_id, t)
);
COMMENT ON TABLE raw.qids IS
    'Quasi-identifiers (Yarovoy et al. 2009): the times at which each person''s position may '
    'be known to an attacker. Dropped with their dataset, also by load --replace.';
REVOKE ALL ON raw.qids FROM PUBLIC;
