"""The ``arena`` console script: one entry point for every command of the project."""
