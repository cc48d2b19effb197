"""Privacy rule 8: a ratio, share or average in a release's figures gives no hidden count back.

The outside review expanded every published share as a continued fraction (0.9054 =
507/560: 53 persons suppressed, where the manifest filters the counts). The first test
replays that attack on a release of every family; the others show the writer publishing a
ratio from filtered counts and the verifier refusing a planted exact one.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import psycopg
import pytest
from psycopg import sql

from anonymizers.metrics import writer
from anonymizers.metrics.shares import Ratio, share
from anonymizers.verifiers import verify_release
from anonymizers.verifiers.base import interval_count
from anonymizers.verifiers.ratios import exact_fraction

ATTACK_DENOMINATOR = 10**6  # counts of the small city are in the tens of thousands
DECIMALS = 1000  # a value rounded to three decimals is p / (a divisor of 1000): no count


def _figures(conn: psycopg.Connection, schema: str) -> list[dict[str, Any]]:
    rows = []
    for table in ("metrics", "metric_series"):
        cur = conn.execute(sql.SQL("SELECT * FROM {}").format(sql.Identifier(schema, table)))
        names = [column.name for column in cur.description or ()]
        rows += [dict(zip(names, row, strict=True)) for row in cur.fetchall()]
    return rows


def _published_counts(conn: psycopg.Connection, schema: str,
                      figures: list[dict[str, Any]]) -> set[int]:
    """What an analyst knows exactly: the manifest's counts, every count figure, the
    counts published beside a ratio, the size of every release table, k."""
    cur = conn.execute(sql.SQL("SELECT * FROM {}").format(sql.Identifier(schema, "manifest")))
    manifest = dict(zip([c.name for c in cur.description or ()], cur.fetchone() or (),
                        strict=True))
    known = {int(manifest["k"])} | {
        int(manifest[name]) for name in ("trajectories_in", "persons_in", "points_in",
                                         "trajectories_out", "suppressed")
        if manifest[name] is not None}
    for figure in figures:
        if figure["unit"] == "count" and figure["value"] is not None:
            known.add(int(figure["value"]))
        known |= {abs(int(figure[c])) for c in ("numerator", "denominator")
                  if figure.get(c) is not None}
    for (table,) in conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = %s "
            "AND table_name NOT IN ('metrics', 'metric_series')", (schema,)).fetchall():
        size = conn.execute(sql.SQL("SELECT count(*) FROM {}").format(
            sql.Identifier(schema, table))).fetchone()
        known.add(int(size[0]) if size else 0)
    return {n for n in known if n > 0}


def _continued_fraction(value: float) -> Fraction | None:
    """The attacker's expansion: p/q equal to the double up to two ulps, for q small enough
    that this is no coincidence (at most a chance of 1e-4 that a number lies that close to
    some fraction of such denominators: 3 q^2 / pi^2 fractions per unit, 4 ulps each) and
    at most 10^6."""
    tolerance = 2 * math.ulp(value)
    bound = min(ATTACK_DENOMINATOR, int(math.sqrt(1e-4 / (0.61 * 2 * tolerance))))
    found = Fraction(value).limit_denominator(max(bound, 1))
    close = abs(float(found) - value) <= tolerance
    return found if close and found.denominator > 1 else None


def _learned(figures: list[dict[str, Any]], known: set[int], k: int, width: int) -> list[str]:
    """Counts the attack learns that the release does not publish: the whole q of a value
    p/q that is no multiple of a published count (nor a rounding to three decimals)."""
    learned = []
    for figure in figures:
        value = figure["value"]
        if figure["unit"] == "count" or value is None or value == 0:
            continue
        found = _continued_fraction(float(value))
        if found is None or DECIMALS % found.denominator == 0:
            continue
        if figure["unit"] == "probability" and found.numerator == 1 and \
                interval_count(found.denominator, k, width) == found.denominator:
            continue  # 1 / a filtered count of candidates: what the filter publishes
        if not any(n % found.denominator == 0 for n in known):
            learned.append(f"{figure.get('name') or figure['series']} = {value!r} = {found}")
    return learned


def test_the_continued_fraction_attack_learns_no_hidden_count_of_any_family(
        published_city, published_city_db):
    with psycopg.connect(published_city_db) as conn:
        learned = {}
        for method, schema in published_city.items():
            figures = _figures(conn, schema)
            k, width = conn.execute(sql.SQL("SELECT k, count_interval FROM {}").format(
                sql.Identifier(schema, "manifest"))).fetchone()
            if found := _learned(figures, _published_counts(conn, schema, figures), k, width):
                learned[method] = found
    assert learned == {}


def test_a_ratio_is_published_from_its_filtered_counts(conn):
    conn.execute("CREATE SCHEMA b")
    conn.execute("CREATE TABLE b.metrics (name text PRIMARY KEY, value float8, unit text "
                 "NOT NULL, description text NOT NULL, numerator bigint, denominator bigint)")
    writer.reset(conn, "b")
    writer.write(conn, "b", [
        ("persons_published_share", share(507, 560), "ratio", "the review's share"),
        ("below_k", share(2, 560), "ratio", "a part of fewer than k"),
        ("tiny_whole", share(1, 4), "ratio", "a whole of fewer than k"),
        ("no_whole", share(0, 0), "ratio", "nothing to share"),
        ("length_increase", Ratio(-1234, 101), "points", "a signed mean of counts"),
        ("attack_max", 1 / 507, "probability", "one over the smallest candidate set"),
        ("attack_mean", 0.0733333, "probability", "an average risk"),
    ], [("reid.fraction_zero", 1.0, share(337, 1486), "ratio", "a share in a series")],
        k=5, count_interval=5)
    got = {name: (value, num, den) for name, value, num, den in conn.execute(
        "SELECT name, value, numerator, denominator FROM b.metrics")}
    assert got["persons_published_share"] == (505 / 560, 505, 560)
    assert got["below_k"] == (None, None, 560)
    assert got["tiny_whole"] == (None, None, None)
    assert got["no_whole"] == (None, 0, 0)
    assert got["length_increase"] == (-1230 / 100, -1230, 100)
    assert got["attack_max"] == (1 / 505, None, None)  # rounded up: never a lower risk
    assert got["attack_mean"] == (0.074, None, None)
    assert conn.execute("SELECT value, numerator, denominator FROM b.metric_series"
                        ).fetchone() == (335 / 1485, 335, 1485)


@pytest.mark.parametrize(("plant", "message"), [
    ("UPDATE {m} SET value = 507.0 / 560 WHERE name = 'persons_published_share'",
     "is not the quotient of its filtered counts"),
    ("UPDATE {m} SET numerator = 507, denominator = 560, value = 507.0 / 560 "
     "WHERE name = 'persons_published_share'", "neither 0 nor an interval-filtered count"),
    ("UPDATE {m} SET numerator = NULL, denominator = NULL, value = 507.0 / 560 "
     "WHERE name = 'persons_published_share'", "is exactly 507/560"),
    ("INSERT INTO {m} (name, value, unit, description) "
     "VALUES ('attack_x_prosecutor_max', 1.0 / 635, 'probability', 'planted')",
     "is 1/635"),
])
def test_the_verifier_refuses_a_ratio_of_exact_counts(published_city, published_city_db,
                                                      plant, message):
    schema = published_city["tcaa"]
    with psycopg.connect(published_city_db) as conn:
        assert verify_release(conn, schema).passed
        conn.execute(sql.SQL(plant).format(m=sql.Identifier(schema, "metrics")))
        result = verify_release(conn, schema)
        conn.rollback()  # the published release is shared by the session's tests
    assert any(message in v for v in result.violations), result.violations


def test_exact_fraction_finds_the_reviews_shares_and_not_a_measure():
    for part, whole in ((507, 560), (33016, 44116), (5608, 38391), (877, 886), (288, 299)):
        assert exact_fraction(part / whole) == Fraction(part, whole)
    assert exact_fraction(191.8472672777532) is None  # an average distance in metres
    assert exact_fraction(math.pi / 4) is None
