"""Developer tools shared by tests/ and benchmarks/ (not part of the app)."""
