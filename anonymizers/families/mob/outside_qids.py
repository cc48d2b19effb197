"""What a MOB release publishes of an object at the time points outside every QID.

Algorithm 4 of seed 003 generalizes an object only at the time points of the sets it is
in; everywhere else the paper publishes its own cell ("free" rows: class -1 of
:class:`~anonymizers.families.mob.generalize.Generalization`). Its privacy model only
covers attackers who know positions at QID times, and an attacker who knows a few of a
person's positions at other times finds the person's object among all others: on a 6-hour
T-Drive window, the location attack of the suite measures risk 1 for nearly every person.
So the free rows are published by one of these rules (``outside_qids``):

``hiding_set`` (the default)
    The least upper bound, at the time point, of the cells of the object's cover group
    that are present then, when they are at least k; withheld (below) when fewer are
    present. The cover group is the object's hiding set (itself, the members of its MOB
    set and the objects whose set holds it, either way: S(O), and the O' with O in S(O'))
    and every object it shares an equivalence class with at some time point; it is the
    same at every time point. At the time points where the object is in a class, its
    region is the class's least upper bound joined with that of its present cover group.
    So every member of the cover group is inside the object's region whenever it has a
    position: with presence hidden (below) each member could be the object's person, and
    an object whose cover group has fewer than k members is in no class and withheld at
    every time point. An attacker who knows any positions of a person, at any times,
    finds at least k persons behind every object they match.
``coarse``
    The cell of a coarser lattice (``coarse_cell_size``, a multiple of ``cell_size``,
    anchored at the CRS origin as the fine one) holding the object's cell.
``withheld``
    No location: the region is the lattice rectangle holding the CRS's area of use, the
    same for every object and time point.
``cell``
    The paper's behaviour: the object's own cell. Re-identifiable by the suite's
    attacks; a release needs the operator's explicit acceptance of that risk.

Which time points an object has a row at is published by the rule ``presence``:
``hidden`` (the default) gives every published object a row at every time point of the
grid, the withheld region where its person has no position (written by the release's
SQL, sql/mob/080_build_release.sql); ``published`` (the paper's) gives it rows exactly
where its person has a position. Presence alone is identifying: on a 6-hour T-Drive
window, 542 persons show 229 distinct patterns of presence, and an attacker who knows how
often a person was somewhere re-identifies most of them even with every position
withheld.

References
----------
.. [1] Yarovoy, Bonchi, Lakshmanan, Wang. Anonymizing Moving Objects: How to Hide a MOB in a
   Crowd? EDBT 2009, §5.1.3 (hiding sets), §5.2 (Algorithm 4), §7 (stronger attack models
   left open).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from anonymizers.errors import InputError
from anonymizers.families.mob.anonymity import MobSets
from anonymizers.families.mob.declaration import MobParams
from anonymizers.families.mob.generalize import Generalization
from anonymizers.families.mob.moving_objects import MovingObjects
from anonymizers.sequences import ranges, sized_runs

__all__ = ["OUTSIDE_QIDS", "PRESENCE", "OutsideQids", "cover_groups", "hiding_groups",
           "publish_outside_qids"]

_SPECS = {spec.name: spec for spec in MobParams.specs()}
OUTSIDE_QIDS: tuple[str, ...] = _SPECS["outside_qids"].choices or ()
PRESENCE: tuple[str, ...] = _SPECS["presence"].choices or ()
_DEFAULTS = MobParams()
_PAIRS = 4_000_000  # (row, group member) pairs expanded at once


@dataclass(frozen=True)
class OutsideQids:
    """The rule for free rows, and what it needs.

    The defaults are those of :class:`~anonymizers.families.mob.declaration.MobParams`.

    Attributes
    ----------
    rule
        One of :data:`OUTSIDE_QIDS`.
    coarse_factor
        Fine cells per side of a coarse cell (``coarse``).
    box
        Inclusive cell ranges (x0, y0, x1, y1) of the withheld region (``withheld``,
        ``hiding_set`` where fewer than k members are present, and every time point an
        object's person has no position when presence is hidden).
    presence
        One of :data:`PRESENCE`.
    """

    rule: str = _DEFAULTS.outside_qids
    coarse_factor: int = round(_DEFAULTS.coarse_cell_size / _DEFAULTS.cell_size)
    box: tuple[int, int, int, int] = (0, 0, 0, 0)
    presence: str = _DEFAULTS.presence

    def __post_init__(self) -> None:
        if self.rule not in OUTSIDE_QIDS:
            raise InputError(f"outside_qids {self.rule!r} must be one of "
                             f"{', '.join(OUTSIDE_QIDS)}")
        if self.presence not in PRESENCE:
            raise InputError(f"presence {self.presence!r} must be one of {', '.join(PRESENCE)}")
        if self.coarse_factor < 1:
            raise InputError("coarse_cell_size must be at least cell_size")

    @classmethod
    def of(cls, params: MobParams, box: tuple[int, int, int, int]) -> OutsideQids:
        """The rule of a release's typed parameters; ``box`` is the withheld region."""
        cell, coarse = params.cell_size, params.coarse_cell_size
        factor = round(coarse / cell)
        if factor < 1 or abs(factor * cell - coarse) > 1e-6 * coarse:
            raise InputError(f"coarse_cell_size ({coarse:g} m) must be a whole multiple of "
                             f"cell_size ({cell:g} m), e.g. {10 * cell:g}")
        return cls(params.outside_qids, factor, box, params.presence)

    @property
    def presence_hidden(self) -> bool:
        """Every object has a region at every time point (the withheld one where its
        person has no position)."""
        return self.presence == "hidden"


def publish_outside_qids(objects: MovingObjects, sets: MobSets, regions: Generalization,
                         policy: OutsideQids) -> Generalization:
    """``regions`` with every free row (class -1) published by ``policy``; with
    ``hiding_set``, the rows in a class also hold the object's present cover group.

    The row order and class ids are kept. Rows at time points where an object's person
    has no position are not rows of ``regions`` (presence: the release's SQL adds them).
    """
    free = regions.cls < 0
    if policy.rule == "cell" or (policy.rule != "hiding_set" and not free.any()):
        return regions
    x0, y0, x1, y1 = (a.copy() for a in (regions.x0, regions.y0, regions.x1, regions.y1))
    if policy.rule == "coarse":
        f = policy.coarse_factor
        x0[free], y0[free] = (regions.x0[free] // f) * f, (regions.y0[free] // f) * f
        x1[free], y1[free] = x0[free] + f - 1, y0[free] + f - 1
    elif policy.rule == "withheld":
        x0[free], y0[free], x1[free], y1[free] = policy.box
    else:
        lub, enough = _cover_lubs(objects, cover_groups(sets, regions), regions.obj,
                                  regions.t, sets.k)
        lub[free & ~enough] = policy.box
        joined = ~free  # a class's rows: its least upper bound and the cover group's
        lub[joined] = np.column_stack([np.minimum(x0, lub[:, 0]), np.minimum(y0, lub[:, 1]),
                                       np.maximum(x1, lub[:, 2]),
                                       np.maximum(y1, lub[:, 3])])[joined]
        x0, y0, x1, y1 = (lub[:, i].astype(regions.x0.dtype) for i in range(4))
    return replace(regions, x0=x0, y0=y0, x1=x1, y1=y1)


def hiding_groups(sets: MobSets) -> tuple[np.ndarray, np.ndarray]:
    """Pairs (object, member) of every object's hiding group: itself, the members of its
    MOB set and the objects whose set holds it (made symmetric: Extreme Union's groups
    are not), unsuppressed objects only, sorted, each pair once."""
    n = sets.n_objects
    owner = np.repeat(np.arange(n, dtype=np.int64), np.diff(sets.set_indptr))
    member = sets.set_members.astype(np.int64)
    live = np.flatnonzero(~sets.suppressed)
    a = np.concatenate([owner, member, live])
    b = np.concatenate([member, owner, live])
    pairs = np.unique(a * n + b)
    return pairs // n, pairs % n


def cover_groups(sets: MobSets, regions: Generalization) -> tuple[np.ndarray, np.ndarray]:
    """Pairs (object, member) of every published object's cover group: its hiding group
    (:func:`hiding_groups`) and every object sharing an equivalence class of ``regions``
    with it at some time point; sorted, each pair once."""
    owner, member = hiding_groups(sets)
    in_class = regions.cls >= 0
    cls, obj = regions.cls[in_class].astype(np.int64), regions.obj[in_class].astype(np.int64)
    order = np.argsort(cls, kind="stable")
    cls, obj = cls[order], obj[order]
    start = np.searchsorted(cls, cls)  # first row of each row's class
    size = np.bincount(cls, minlength=regions.n_classes)[cls]
    mates = obj[ranges(start, size)]
    n = np.int64(sets.n_objects)
    pairs = np.unique(np.concatenate([owner * n + member, np.repeat(obj, size) * n + mates]))
    return pairs // n, pairs % n


def _cover_lubs(objects: MovingObjects, groups: tuple[np.ndarray, np.ndarray],
                obj: np.ndarray, t: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """For each (object, time point): the cell ranges holding the cells of its group's
    members present then, and whether they are at least k."""
    owner, member = groups
    start = np.searchsorted(owner, np.arange(objects.n_objects + 1))
    size = start[obj + 1] - start[obj]
    lub = np.empty((obj.size, 4), dtype=np.int64)
    enough = np.empty(obj.size, dtype=bool)
    for first, last in sized_runs(size, _PAIRS):
        part = slice(first, last)
        lub[part], enough[part] = _lubs(objects, member, start[obj[part]], size[part],
                                        t[part], k)
    return lub, enough


def _lubs(objects: MovingObjects, member: np.ndarray, start: np.ndarray, size: np.ndarray,
          t: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_cover_lubs` of one chunk of rows (groups ``member[start:start+size]``)."""
    n_rows = t.size
    row = np.repeat(np.arange(n_rows), size)
    at = np.repeat(t, size)
    others = member[ranges(start, size)]
    here = objects.present[others, at]
    row, at, others = row[here], at[here], others[here]
    x, y = objects.cx[others, at].astype(np.int64), objects.cy[others, at].astype(np.int64)
    lub = np.empty((n_rows, 4), dtype=np.int64)
    for column, (values, ufunc) in enumerate(((x, np.minimum), (y, np.minimum),
                                              (x, np.maximum), (y, np.maximum))):
        lub[:, column] = _reduce(ufunc, values, row, n_rows)
    return lub, np.bincount(row, minlength=n_rows) >= k


def _reduce(ufunc: np.ufunc, values: np.ndarray, label: np.ndarray, n: int) -> np.ndarray:
    """``ufunc`` (minimum / maximum) of ``values`` per label; 0 for labels without one."""
    info = np.iinfo(np.int64)
    out = np.full(n, info.max if ufunc is np.minimum else info.min, dtype=np.int64)
    ufunc.at(out, label, values)
    out[np.bincount(label, minlength=n) == 0] = 0
    return out
