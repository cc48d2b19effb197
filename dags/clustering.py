"""Airflow DAG of the clustering family (seed 002): tcaa.

Wiring only: the DAG is built from the registry (anonymizers/families/registry.py).
"""

from anonymizers.pipeline.dag_factory import release_dag

dag = release_dag("clustering")
