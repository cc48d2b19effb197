"""Airflow DAG of the MOB family (seed 003): mob_extreme_union, mob_symmetric.

Wiring only: the DAG is built from the registry (anonymizers/families/registry.py).
"""

from anonymizers.pipeline.dag_factory import release_dag

dag = release_dag("mob")
