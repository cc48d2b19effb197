-- The place sequences of a trajectory-groups release's published groups (for the
-- homogeneity metric: prefixes with a single continuation). Identifiers: build.
SELECT places FROM {build}.groups
