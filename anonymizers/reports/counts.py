"""Every count the report shows of one quantity, so the page can say why two differ.

The same published rows are counted in three places: the map's and the tables' row counts
(exact: anyone can count the rows of a release), the manifest's published count (exact, the
same rows), and the verifier's checks (through the interval filter, privacy rule 4: the
lower end of an interval of ``count_interval`` starting at k). The page then shows, say,
993 flows in the verifier's table and 994 flows on the map; :func:`counts_note` says so
with the figures, and ``tests/test_report.py`` checks that every pair agrees or is the
filter of the other.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from anonymizers.reports.checks_words import is_filtered_check
from anonymizers.reports.release_data import ReleaseData
from anonymizers.verifiers.intervals import interval_count

__all__ = ["PageCount", "counts_note", "disagreements", "page_counts"]

EXACT = "exact"
FILTERED = "interval-filtered"


@dataclass(frozen=True)
class PageCount:
    """One count on the page: the quantity (a table's name, or the manifest's published
    unit), its figure (None: "fewer than k"), where it is shown and how it was counted."""

    quantity: str
    value: int | None
    where: str
    how: str


def page_counts(data: ReleaseData) -> list[PageCount]:
    """The counts of published items that the page shows in more than one place."""
    found = [PageCount(t.name, t.rows, "tables of the release", EXACT) for t in data.tables]
    found += [PageCount(r.layer.table, len(r.geometries), "map", EXACT) for r in data.layers
              if r.layer.query is None]  # a family's own query may draw derived rows
    manifest = data.manifest
    if manifest.get("trajectories_out") is not None:
        found.append(PageCount(str(manifest["published_unit"]),
                               int(manifest["trajectories_out"]), "release in words", EXACT))
    quantities = {count.quantity for count in found}
    checks = (manifest.get("verifier_result") or {}).get("checks") or {}
    found += [PageCount(name, value, "verifier's checks",
                        FILTERED if is_filtered_check(name, value) else EXACT)
              for name, value in checks.items() if name in quantities]
    return found


def disagreements(counts: Sequence[PageCount], k: int, width: int) -> list[str]:
    """Pairs of counts of one quantity that neither agree nor are the interval filter of
    each other: empty on a sound page."""
    problems = []
    for quantity in dict.fromkeys(c.quantity for c in counts):
        same = [c for c in counts if c.quantity == quantity]
        exact = {c.value for c in same if c.how == EXACT}
        if len(exact) > 1:
            problems.append(f"{quantity}: exact counts {sorted(map(str, exact))} differ")
        for one in (c for c in same if c.how == FILTERED):
            wanted = {interval_count(n, k, width) for n in exact if n is not None}
            if exact and one.value not in wanted:
                problems.append(f"{quantity}: {one.value} ({one.where}) is not the interval "
                                f"filter of {sorted(map(str, exact))}")
    return problems


def counts_note(counts: Sequence[PageCount], width: int) -> str:
    """Why two figures of one quantity on this page differ, with the figures."""
    pairs = []
    for one in (c for c in counts if c.how == FILTERED):
        exact = next((c for c in counts if c.quantity == one.quantity and c.how == EXACT),
                     None)
        if exact is not None and exact.value != one.value:
            shown = "fewer than k" if one.value is None else f"{one.value:,}"
            pairs.append(f"{one.quantity}: {shown} in the verifier's checks, {exact.value:,} "
                         f"on the {exact.where}")
    rule = (f"Counts marked interval-filtered are the lower end of an interval of "
            f"{width} starting at k (privacy rule 4: no exact count below k is published), "
            "so they can be up to "
            f"{width - 1} below the exact count of the same rows; the map and the tables "
            "count the published rows exactly (anyone can count them).")
    if not pairs:
        return rule + " On this page every count of the same thing agrees."
    return rule + " Hence on this page: " + "; ".join(pairs) + "."
