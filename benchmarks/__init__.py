"""Benchmarks (run as scripts)."""
