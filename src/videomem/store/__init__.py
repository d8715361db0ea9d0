"""SQLite store (source of truth), frame files and derived vector indexes."""

from videomem.store.db import PIPELINE_META, SCHEMA_VERSION, Store

__all__ = ["PIPELINE_META", "SCHEMA_VERSION", "Store"]
