"""Benchmarks for posviz (issue 4): run ``python benchmarks/bench.py``."""
