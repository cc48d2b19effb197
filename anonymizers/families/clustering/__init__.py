"""Clustering-based trajectory anonymization: MLA (seed 001) and its building blocks."""
