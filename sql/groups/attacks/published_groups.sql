-- Attack suite, groups family: every published trajectory group's place sequence.
-- Identifiers: release.
SELECT places::text[] AS places FROM {release}.groups ORDER BY group_id;
