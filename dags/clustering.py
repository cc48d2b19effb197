"""Airflow DAGs of the clustering family (seeds 001, 002): tcaa, mla_heuristic, mla_kmeans,
mla_iterative_kmeans.

``clustering`` publishes one release per run; ``clustering_windows`` one per window of
[start, end) (mapped tasks). Wiring only: both are built from the registry.
"""

from anonymizers.pipeline.dag_factory import release_dag, windows_dag

dag = release_dag("clustering")
windows = windows_dag("clustering")
