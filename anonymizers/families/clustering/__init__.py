"""Clustering-based anonymization: TCAA (seed 002) and MLA (seed 001), with nothing below k."""
