"""Airflow DAG of the trajectory-groups family (seed 004): tg_overlapping, tg_nonoverlapping.

Sequences of places (stations, cells) travelled by at least k distinct persons, with
common origin/destination groups and demographic classes. Wiring only: the DAG is built
from the registry (anonymizers/families/registry.py).
"""

from anonymizers.pipeline.dag_factory import release_dag

dag = release_dag("groups")
