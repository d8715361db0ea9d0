"""Benchmarks: loaders, scoring, harness and reports."""
