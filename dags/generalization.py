"""Airflow DAGs of the generalization family (seed 000): grid_kam_cut, kam_cut, kam_rec.

``generalization`` publishes one release per run; ``generalization_windows`` one per window
of [start, end) (mapped tasks). Wiring only: both are built from the registry.
"""

from anonymizers.pipeline.dag_factory import release_dag, windows_dag

dag = release_dag("generalization")
windows = windows_dag("generalization")
