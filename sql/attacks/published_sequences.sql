-- Attack suite, generalization family: every published trajectory's cell sequence (one row
-- per published record, duplicates kept: each is one record an attacker can pick).
-- Identifiers: release.
SELECT cells FROM {release}.trajectories;
