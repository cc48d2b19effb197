-- The published release becomes readable by analyst (privacy rule 6: releases and the
-- catalog, nothing else). Run by the publish step in its transaction, for every release
-- except a comparison's (schema 023). Identifiers: release.
GRANT USAGE ON SCHEMA {release} TO analyst;
GRANT SELECT ON ALL TABLES IN SCHEMA {release} TO analyst;
