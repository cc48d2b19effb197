-- Verifier of trajectory groups (seed 004): how many demographic classes are published.
-- Identifiers: classes (the table under test).
SELECT count(*) AS classes FROM {classes};
