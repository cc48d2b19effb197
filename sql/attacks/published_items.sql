-- Attack suite, generalization family: the cells of every published trajectory, one row per
-- published row (duplicates kept: each is one record an attacker can pick), as the cell ids
-- separated by spaces ('' for a trajectory without a cell). Records are numbered 0.. in the
-- order the rows come. One row per record, not per cell: at 25M fixes a row per cell was
-- ten million COPY messages and a sort of them, about a minute. Identifiers: release.
COPY (
    SELECT array_to_string(cells, ' ') FROM {release}.trajectories
) TO STDOUT WITH (FORMAT csv)
