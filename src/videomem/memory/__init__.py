"""Memories built from the store: events and key-value objects (TeleMem)."""
