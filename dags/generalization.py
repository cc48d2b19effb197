"""Airflow DAG of the generalization family (seed 000): grid_kam_cut, kam_cut, kam_rec.

Wiring only: the DAG is built from the registry (anonymizers/families/registry.py).
"""

from anonymizers.pipeline.dag_factory import release_dag

dag = release_dag("generalization")
