"""Airflow maintenance DAG: drops the work and build schemas of failed or abandoned runs.

Wiring only: built by anonymizers/pipeline/maintenance_dag.py (daily by default).
"""

from anonymizers.pipeline.maintenance_dag import cleanup_dag

dag = cleanup_dag()
