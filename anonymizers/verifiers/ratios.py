"""Privacy rule 8, checked on every release: derived numbers obey the counts' rules.

A published ratio of counts (a share, a coverage, a mean of counts) must not give back a
count the interval filter hid. Two checks over every figure of ``metrics`` and
``metric_series``:

(a) **declared ratios**: a figure with a ``numerator`` or a ``denominator`` has both
    filtered like every published count (0, or an interval-filtered count of at least k;
    a signed numerator by its magnitude) and its value is exactly their quotient (NULL
    when the denominator is 0 or suppressed);
(b) **the continued-fraction attack** on every other figure that is not a count: a value
    that is exactly p/q (to within two units in the last place of a double) for a
    denominator q small enough that this is no coincidence (see :func:`largest_denominator`)
    is a violation unless q is explained by what the release publishes anyway: q divides a
    count of the manifest, a published count of the figures, a row count of a release
    table or k, or q divides 10^3 (a value rounded to at most three decimals). An attack
    probability that is 1 / c for c >= k must have c on the interval filter's lattice;
    a 1 / c above 1/k is the measured risk that the gate stops or the operator accepted;
    any other probability is subject to the attack like every figure.

Written apart from the metrics writer and from every family (it imports none of them).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import psycopg

from anonymizers.db.sqlfiles import fetch_columns, fetch_rows
from anonymizers.verifiers.intervals import interval_count

if TYPE_CHECKING:
    from anonymizers.verifiers.base import ReleaseUnderTest, VerifierResult

__all__ = ["FALSE_POSITIVE_RATE", "Figure", "check_ratios", "exact_fraction",
           "largest_denominator"]

# Chance that a value that is no ratio at all lies within the tolerance of some p/q with
# q <= largest_denominator(v): the fractions of denominator <= Q are about 3 Q^2 / pi^2 per
# unit of length, each covering 2 tol, so the chance is about 0.61 Q^2 * 2 tol. At 1e-5 a
# release of a few hundred figures raises a false alarm less than once in 300 releases,
# and a share of about 0.5 is still caught up to denominators of about 190,000.
FALSE_POSITIVE_RATE = 1e-5
LARGEST_DENOMINATOR = 10**7  # beyond, a double cannot tell p/q from its neighbours anyway
ROUNDING = 10**3  # a value rounded to at most three decimals is p / (a divisor of this)
_MANIFEST_COUNTS = ("trajectories_in", "persons_in", "points_in", "trajectories_out",
                    "suppressed")


@dataclass(frozen=True)
class Figure:
    """One published figure: a scalar (``x`` None) or a point of a series."""

    name: str
    x: float | None
    unit: str
    value: float | None
    numerator: int | None
    denominator: int | None

    @property
    def label(self) -> str:
        return self.name if self.x is None else f"{self.name} at x = {self.x:g}"

    @property
    def declared(self) -> bool:
        return self.numerator is not None or self.denominator is not None


def _tolerance(value: float) -> float:
    return 2 * math.ulp(value)


def largest_denominator(value: float) -> int:
    """The largest q for which ``value`` being p/q (within two ulps) is taken as evidence
    that it is one: :data:`FALSE_POSITIVE_RATE` = 0.61 q^2 * 2 tol.

    >>> largest_denominator(0.5), largest_denominator(0.05), largest_denominator(1234.5)
    (192132, 768528, 4245)
    """
    if value == 0:
        return 1
    bound = math.sqrt(FALSE_POSITIVE_RATE / (0.61 * 2 * _tolerance(value)))
    return max(1, min(LARGEST_DENOMINATOR, int(bound)))


def exact_fraction(value: float) -> Fraction | None:
    """The fraction p/q (q > 1) that ``value`` is, if q is small enough to be no accident.

    >>> exact_fraction(507 / 560), exact_fraction(math.pi / 4), exact_fraction(0.5)
    (Fraction(507, 560), None, Fraction(1, 2))
    """
    if not math.isfinite(value):
        return None
    found = Fraction(value).limit_denominator(largest_denominator(value))
    if found.denominator == 1 or abs(float(found) - value) > _tolerance(value):
        return None
    return found


def read_figures(conn: psycopg.Connection, schema: str) -> list[Figure]:
    """Every row of ``metrics`` and ``metric_series`` of ``schema``, columns by name."""
    figures = []
    for row in fetch_rows(conn, "verify/metric_figures.sql", release=schema):
        named: dict[str, Any] = row["figure"]
        figures.append(Figure(
            str(named.get("name", named.get("series"))),
            None if named.get("x") is None else float(named["x"]), str(named["unit"]),
            None if named.get("value") is None else float(named["value"]),
            None if named.get("numerator") is None else int(named["numerator"]),
            None if named.get("denominator") is None else int(named["denominator"])))
    return figures


def _public_counts(conn: psycopg.Connection, release: ReleaseUnderTest,
                   figures: Iterable[Figure]) -> set[int]:
    """Counts the release publishes anyway: those of its manifest, of its figures (filtered)
    and the sizes of its tables; and k."""
    counts = {release.k}
    counts |= {int(release.manifest[name]) for name in _MANIFEST_COUNTS
               if release.manifest.get(name) is not None}
    for figure in figures:
        if figure.unit == "count" and figure.value is not None:
            counts.add(int(figure.value))
        counts |= {abs(n) for n in (figure.numerator, figure.denominator) if n is not None}
    counts |= {int(n) for n in fetch_columns(conn, "verify/table_sizes.sql",
                                             {"schema": release.schema})["n"] if n is not None}
    return {n for n in counts if n > 0}


def _filtered(n: int | None, k: int, width: int) -> bool:
    """0 or an interval-filtered count of at least k (a signed sum by its magnitude)."""
    return n is not None and interval_count(abs(n), k, width) == abs(n)


def _declared_violation(figure: Figure, k: int, width: int) -> str | None:
    """(a): what is wrong with a declared ratio, or None."""
    num, den = figure.numerator, figure.denominator
    where = f"metric {figure.label} (numerator {num}, denominator {den})"
    for what, n in (("numerator", num), ("denominator", den)):
        if n is not None and not _filtered(n, k, width):
            return (f"{where}: the {what} is neither 0 nor an interval-filtered count of at "
                    f"least k={k}, so the ratio gives an exact count back (rule 8)")
    if den is not None and den < 0:
        return f"{where}: a negative denominator is no count"
    expected = num / den if num is not None and den else None
    if figure.value != expected:
        return (f"{where}: value {figure.value} is not the quotient of its filtered counts "
                f"({expected}); a ratio must be published from filtered counts (rule 8)")
    return None


def _probability_ok(value: float, k: int, width: int) -> bool | None:
    """An attack probability: True/False when the probability rule decides, else None."""
    if value > 1.0 / k + 1e-12:
        return True  # measured risk above 1/k: the gate's business (rule 9)
    c = round(1 / value)
    if abs(value * c - 1) >= 1e-12:
        return None
    # 1/8 = 0.125 may be an average rounded up to three decimals as well as 1 over 8.
    return _filtered(c, k, width) or ROUNDING % c == 0


def _undeclared_violation(figure: Figure, public: set[int], k: int, width: int) -> str | None:
    """(b): the continued-fraction attack on a figure that declares no counts."""
    value = figure.value
    if figure.unit == "count" or value is None or value == 0:
        return None
    if figure.unit == "probability" and (decided := _probability_ok(value, k, width)) is not None:
        return None if decided else (
            f"metric {figure.label} = {value:.6g} is 1/{round(1 / value)}: a count of "
            f"candidates that is not interval-filtered (k={k}, interval {width}; rule 8)")
    found = exact_fraction(value)
    if found is None:
        return None
    q = found.denominator
    if ROUNDING % q == 0 or any(n % q == 0 for n in public):
        return None
    return (f"metric {figure.label} = {value:.6g} is exactly {found.numerator}/{q}, a ratio of "
            f"counts the release does not publish: declare it as a ratio (numerator, "
            "denominator) so that it is computed from filtered counts, or round it (rule 8)")


def check_ratios(conn: psycopg.Connection, release: ReleaseUnderTest,
                 result: VerifierResult) -> None:
    """Rule 8 on every figure of ``release``: (a) declared ratios, (b) the others."""
    k, width = release.k, release.count_interval
    figures = read_figures(conn, release.schema)
    public = _public_counts(conn, release, figures)
    declared = [f for f in figures if f.declared]
    result.checks["declared_ratios"] = len(declared)
    result.checks["figures_attacked"] = len(figures) - len(declared)
    for figure in figures:
        problem = (_declared_violation(figure, k, width) if figure.declared
                   else _undeclared_violation(figure, public, k, width))
        if problem is not None:
            result.violations.append(problem)
