"""Ingest stages (sample → caption → objects) and the runner that drives them."""
