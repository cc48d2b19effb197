"""Independent privacy verifiers: re-check a release's privacy model from raw data."""
