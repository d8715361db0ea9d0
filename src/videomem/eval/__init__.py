"""Benchmarks: loaders, scoring, reports and the scripted benchmark generator."""
