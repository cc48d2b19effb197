-- Attack suite, generalization family: the cells of every distinct published trajectory,
-- one row per distinct sequence, as the cell ids separated by spaces ('' for a trajectory
-- without a cell). Copies of one sequence are one record to an attacker: the same cells
-- match the same knowledge and stand for the same persons, and every model scores the
-- union of the matched records' anonymity sets, which a copy does not change
-- (tests/test_attack_models.py checks it on every model). A k-anonymous release repeats
-- its sequences: at 25M fixes 1.9 million rows hold 238k distinct ones, and the models'
-- posting lists shrink with them. Records are numbered 0.. in the order the rows come:
-- lexicographic order of their cells (integer arrays compare element by element, a
-- prefix first), so that records sharing a prefix come together and the search for the
-- persons behind each matches that prefix once (RecordIndex.each_containing, ordered).
-- One row per record, not per cell: at 25M fixes a row per cell was ten million COPY
-- messages and a sort of them, about a minute. Identifiers: release.
-- Each row comes with its record's number (what db.groups.copy_sequences reads).
-- The published sequence is a JSON array (which orders by length first): each distinct
-- one becomes an integer array for the order.
COPY (
    SELECT row_number() OVER (ORDER BY cells) - 1, array_to_string(cells, ' ')
    FROM (SELECT ARRAY(SELECT e::integer
                       FROM jsonb_array_elements_text(d.cells) WITH ORDINALITY AS u(e, i)
                       ORDER BY i) AS cells
          FROM (SELECT cells FROM {release}.trajectories GROUP BY cells) AS d
         ) AS distinct_sequences
    ORDER BY cells
) TO STDOUT WITH (FORMAT csv)
