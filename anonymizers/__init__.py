"""Anonymized mobility data releases from PostGIS, built and verified by Airflow."""

__version__ = "0.1.0"
