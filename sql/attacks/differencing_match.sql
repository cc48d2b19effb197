-- Differencing attack: the items of two releases (each a subquery of
-- differencing_<family>.sql and differencing_window.sql) matched on (kind, item_key).
-- Every item of either release is returned, matched or not (a NULL side: not published
-- there), so the caller counts both releases' items and their matches from one scan.
-- Identifiers: the composed subqueries items_a, items_b.
WITH a AS (
{items_a}
), b AS (
{items_b}
)
SELECT kind,
       coalesce(a.label, b.label) AS label,
       a.n_lo AS a_lo, a.n_hi AS a_hi,
       b.n_lo AS b_lo, b.n_hi AS b_hi
FROM a FULL JOIN b USING (kind, item_key)
ORDER BY kind, label
