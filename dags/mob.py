"""Airflow DAGs of the MOB family (seed 003): mob_extreme_union, mob_symmetric.

``mob`` publishes one release per run; ``mob_windows`` one per window of [start, end)
(mapped tasks). Wiring only: both are built from the registry.
"""

from anonymizers.pipeline.dag_factory import release_dag, windows_dag

dag = release_dag("mob")
windows = windows_dag("mob")
