-- Attack suite, generalization family: the items of every published trajectory, one row
-- per (record, cell) in order. Records are numbered 0.. in table order, one per published
-- row (duplicates kept: each is one record an attacker can pick); a record without a cell
-- has no row (attacks/published_count.sql counts them all). Flat rows, not an array per
-- record: a release of a 25M-fix city has millions of records. Identifiers: release.
COPY (
    SELECT r.record, c.cell
    FROM (SELECT row_number() OVER () - 1 AS record, cells FROM {release}.trajectories) AS r
    CROSS JOIN LATERAL unnest(r.cells) WITH ORDINALITY AS c (cell, position)
    ORDER BY r.record, c.position
) TO STDOUT WITH (FORMAT csv)
