"""SQLite store (source of truth), frame files and derived vector indexes."""

from videomem.store.db import SCHEMA_VERSION, Store

__all__ = ["SCHEMA_VERSION", "Store"]
