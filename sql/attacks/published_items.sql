-- Attack suite, generalization family: the cells of every published trajectory, one row per
-- published row (duplicates kept: each is one record an attacker can pick), as the cell ids
-- separated by spaces ('' for a trajectory without a cell). Records are numbered 0.. in the
-- order the rows come: lexicographic order of their cells (integer arrays compare element
-- by element, a prefix first), so that records sharing a prefix come together and the
-- search for the persons behind each matches that prefix once (RecordIndex.each_containing,
-- ordered). One row per record, not per cell: at 25M fixes a row per cell was ten million
-- COPY messages and a sort of them, about a minute. Identifiers: release.
COPY (
    SELECT array_to_string(cells, ' ') FROM {release}.trajectories ORDER BY cells
) TO STDOUT WITH (FORMAT csv)
