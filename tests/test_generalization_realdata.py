"""kam_rec on two hours of real T-Drive taxis: the anonymizer never counts a published item
above the verifier's recount, and the gate publishes.

Taxis park outside the clip box (it follows the published generators, not the fixes): their
fixes are gaps. A parked taxi's segments do not move, and a segment that did not move along
an axis was once taken to run through the whole box along the other: it visited the cell
nearest the parked taxi, which no polygon holds. The prefix tree counted those visits and
the verifier did not, so items of k persons for the anonymizer had fewer for the verifier
(this window: two sequences of 4 persons and a flow of 4 at k = 5) and the gate refused
the release.
"""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest
from differential.generalization import compare_release, explain
from pipeline_helpers import catalog_rows, run_steps
from realdata_helpers import tdrive_window

from anonymizers.pipeline import steps
from anonymizers.release.spec import ReleaseSpec

# Two hours of every taxi (9,728 rows, 466 persons): the window where the gap visits
# made the gate refuse kam_rec at k = 5.
START, END = "2008-02-05T00:00:00Z", "2008-02-05T02:00:00Z"
K = 5




@pytest.mark.realdata
def test_kam_rec_counts_no_item_of_a_tdrive_window_above_the_verifier_and_publishes(
        db_url: str, conn: psycopg.Connection, tmp_path: Path) -> None:
    from anonymizers.loading import load_dataset

    load_dataset(tdrive_window(tmp_path, START, END), "tdrive", url=db_url)
    spec = run_steps({"dataset": "tdrive", "method": "kam_rec", "k": K}, until="manifest")
    assert spec is not None
    release = ReleaseSpec.from_dict(spec)
    comparison = compare_release(conn, release.work_schema, release.build_schema)
    kinds = [item.kind for item in comparison.items]
    assert kinds.count("sequence") > 50 and kinds.count("flow") > 200
    # No published sequence or flow counts more persons for the anonymizer than for the
    # verifier (the persons only the anonymizer counts, and their sequences, if one does),
    # and none falls below k there ...
    assert [explain(comparison, item) for item in comparison.overcounted()] == []
    assert min(item.verifier for item in comparison.items) >= K
    # ... because every trajectory's published cells as the prefix tree saw them lie, in
    # order, in the verifier's derivation.
    assert comparison.not_contained() == []
    for name in ("metrics", "verify", "publish"):
        steps.run_step(name, spec)
    assert catalog_rows(conn) == [(release.release_name,)]
