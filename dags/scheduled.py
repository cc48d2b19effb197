"""Airflow DAGs of the declared scheduled releases: one DAG ``scheduled_<name>`` per entry
of the schedules file (anonymizers.schedules); none when nothing is declared.

Wiring only: each is the release DAG of the method's family, built from the declaration.
"""

from anonymizers.pipeline.dag_factory import scheduled_dags

globals().update(scheduled_dags())
