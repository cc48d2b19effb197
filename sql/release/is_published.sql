-- Whether the catalog already holds the release (one row, or none). Params: release_name.
SELECT true AS published
FROM catalog.releases
WHERE release_name = %(release_name)s;
