"""Trajectory-group anonymization (Nordström 2012): sequences followed by k individuals."""
