"""The shared modules read SQL results by column name, never by position: reordering a
SELECT list must not silently swap two values (a count for a bound, lon for lat).

A read by position is what the code cannot get by name: the value of ``run_sql_file``
(tuples) used at all, or ``fetchone`` / ``fetchall`` / ``fetchmany`` on a cursor made
without a ``row_factory``. ``fetch_rows`` / ``fetch_row`` / ``fetch_columns`` (and a
``dict_row`` cursor, for a query composed in Python) read by name.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "anonymizers"
FETCHES = {"fetchone", "fetchall", "fetchmany"}
# Converted in changes of their own (a family's folder, the release gate and step, the
# QID reader): each leaves this list when it reads by name.
NOT_YET: tuple[str, ...] = ()
# Where names are taken from the cursor's description: the one place rows are tuples.
READER = ("db/sqlfiles.py", "_execute")


def _shared_modules() -> list[Path]:
    return sorted(path for path in PACKAGE.rglob("*.py")
                  if not str(path.relative_to(PACKAGE)).startswith(NOT_YET))


def _with_row_factory(tree: ast.AST, cursor: str) -> bool:
    """Whether ``cursor`` is bound (``=`` or ``with ... as``) to a cursor made with a
    row factory somewhere in ``tree``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            names, value = node.targets, node.value
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            names, value = [node.optional_vars], node.context_expr
        else:
            continue
        if any(isinstance(name, ast.Name) and name.id == cursor for name in names) and any(
                isinstance(k, ast.keyword) and k.arg == "row_factory" for k in ast.walk(value)):
            return True
    return False


def _cursor_of(call: ast.Call) -> ast.expr:
    """The cursor a fetch is called on: ``cur`` in ``cur.execute(q).fetchall()``."""
    receiver = call.func.value  # type: ignore[attr-defined]
    while (isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Attribute)
           and receiver.func.attr == "execute" and isinstance(receiver.func.value, ast.Name)):
        receiver = receiver.func.value
    return receiver


def positional_reads(source: str, skip_function: str | None = None) -> list[int]:
    """Lines of ``source`` that read an SQL result by position (see the module's doc)."""
    tree = ast.parse(source)
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    skipped = {node for function in ast.walk(tree)
               if isinstance(function, ast.FunctionDef) and function.name == skip_function
               for node in ast.walk(function)}
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or node in skipped:
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if name == "run_sql_file" and not isinstance(parents.get(node), ast.Expr):
            found.append(node.lineno)
        elif name in FETCHES and isinstance(func, ast.Attribute):
            cursor = _cursor_of(node)
            made_by_name = (_with_row_factory(tree, cursor.id) if isinstance(cursor, ast.Name)
                            else any(isinstance(k, ast.keyword) and k.arg == "row_factory"
                                     for k in ast.walk(cursor)))
            if not made_by_name:
                found.append(node.lineno)
    return sorted(found)


@pytest.mark.parametrize("source, lines", [
    ('rows = run_sql_file(conn, "a.sql")', [1]),
    ('for a, b in run_sql_file(conn, "a.sql"):\n    pass', [1]),
    ('run_sql_file(conn, "a.sql")', []),  # a statement: nothing read
    ('n = conn.execute("SELECT 1").fetchone()[0]', [1]),
    ('cur = conn.cursor()\nrows = cur.execute(q).fetchall()', [2]),
    ('with conn.cursor(row_factory=dict_row) as cur:\n    rows = cur.execute(q).fetchall()', []),
    ('rows = conn.cursor(row_factory=dict_row).execute(q).fetchall()', []),
    ('row = fetch_row(conn, "a.sql")["n"]', []),
], ids=["used", "unpacked", "statement", "execute-fetchone", "named-cursor", "dict-row-with",
        "dict-row-chain", "fetch-row"])
def test_the_check_sees_positional_reads(source: str, lines: list[int]) -> None:
    assert positional_reads(source) == lines


def test_shared_modules_read_rows_by_column_name() -> None:
    found = [f"{path.relative_to(PACKAGE)}:{line}" for path in _shared_modules()
             for line in positional_reads(
                 path.read_text(),
                 READER[1] if str(path.relative_to(PACKAGE)) == READER[0] else None)]
    assert found == [], ("rows read by position (use fetch_rows / fetch_row / fetch_columns, "
                         "or a dict_row cursor, and name the columns in the .sql file): "
                         + ", ".join(found))
