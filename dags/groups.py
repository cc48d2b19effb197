"""Airflow DAGs of the trajectory-groups family (seed 004): tg_overlapping, tg_nonoverlapping.

``groups`` publishes one release per run; ``groups_windows`` one per window of [start, end)
(mapped tasks). Wiring only: both are built from the registry.
"""

from anonymizers.pipeline.dag_factory import release_dag, windows_dag

dag = release_dag("groups")
windows = windows_dag("groups")
