"""Generalization-based anonymization: cell sequences and prefix-tree k-anonymity (seed 000)."""
