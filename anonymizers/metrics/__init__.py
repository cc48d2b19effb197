"""Utility and risk metrics computed on every release: displacement, clusters, re-identification.

All functions are pure (numpy arrays and plain Python in, plain results out) and know
nothing about databases; the pipeline feeds them and stores what they return.

* :mod:`~anonymizers.metrics.displacement`: Andrienko's local and global displacement
  measures of a spatial generalization (seed 000, Section 6.1.2).
* :mod:`~anonymizers.metrics.cluster_preservation`: route similarity, OPTICS, and the
  precision / recall / F-measure (plain and starred) of cluster preservation (Section 8.3).
* :mod:`~anonymizers.metrics.reidentification`: the success probability of the paper's
  linking attack per number of observed points (Theorem 10, Section 8.4).

References
----------
.. [1] A. Monreale, G. Andrienko, N. Andrienko, F. Giannotti, D. Pedreschi, S. Rinzivillo,
   S. Wrobel, "Movement Data Anonymity through Generalization", Transactions on Data
   Privacy 3 (2010), 91-121.
.. [2] N. Andrienko and G. Andrienko, "Spatial generalization and aggregation of massive
   movement data", IEEE TVCG 17(2) (2011).
"""

from __future__ import annotations

from anonymizers.metrics.cluster_preservation import (
    NOISE,
    SUPPRESSED,
    cluster_preservation,
    cluster_preservation_report,
    optics_labels,
    resample_route,
    route_distance_matrix,
    route_similarity,
)
from anonymizers.metrics.displacement import (
    LocalDisplacements,
    displacement_measures,
    local_displacements,
)
from anonymizers.metrics.reidentification import (
    NO_CELL,
    generalize_observations,
    reidentification_risk,
)

__all__ = [
    "NOISE",
    "NO_CELL",
    "SUPPRESSED",
    "LocalDisplacements",
    "cluster_preservation",
    "cluster_preservation_report",
    "displacement_measures",
    "generalize_observations",
    "local_displacements",
    "optics_labels",
    "reidentification_risk",
    "resample_route",
    "route_distance_matrix",
    "route_similarity",
]
