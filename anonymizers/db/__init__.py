"""Database layer: where the database is, how to connect, schema migrations, SQL files.

It knows nothing about anonymization algorithms.
"""
