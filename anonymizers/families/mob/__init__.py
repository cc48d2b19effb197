"""Moving objects with personal quasi-identifiers (seed 003)."""
