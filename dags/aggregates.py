"""Airflow DAGs of the aggregates family: presence, od (k-anonymous counts per zone and bin).

``aggregates`` publishes one release per run; ``aggregates_windows`` one per window of
[start, end) (mapped tasks). Wiring only: both are built from the registry.
"""

from anonymizers.pipeline.dag_factory import release_dag, windows_dag

dag = release_dag("aggregates")
windows = windows_dag("aggregates")
