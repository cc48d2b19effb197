-- Every published group of a clustering release with its published size.
-- Identifiers: release.
SELECT group_id, n_persons FROM {release}.groups ORDER BY group_id;
