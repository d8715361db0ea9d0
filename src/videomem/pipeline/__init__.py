"""Ingest stages (sample → caption → objects → episodic) and the runner that drives them."""
