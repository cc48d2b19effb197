-- Attack suite, groups family: every published trajectory group's place sequence.
-- places is a JSON array of place names (read as a list). Identifiers: release.
SELECT places FROM {release}.groups ORDER BY group_id;
