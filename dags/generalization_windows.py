"""Airflow DAG of the generalization family, one release per window of [start, end) (mapped).

Wiring only: the DAG is built from the registry (anonymizers/families/registry.py).
"""

from anonymizers.pipeline.dag_factory import windows_dag

dag = windows_dag("generalization")
