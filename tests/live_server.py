"""Helpers for the server tests.

* `live(app)`: the app served for real by uvicorn on a free port in a thread, for what a test
  client cannot show: raw request paths no client library would normalise, a browser, many
  concurrent clients.
* `copy_store(src, dst)`: a private copy of a store for a test that changes it (symlinks
  planted in it, an ingest into it).
* `sse(lines)`: (event, data) pairs of a server-sent event stream.
* `ClockMemory`: a memory for registering after the server started (it must show up).
"""

from __future__ import annotations

import json
import shutil
import socket
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from videomem import core
from videomem.evidence import Evidence
from videomem.memory.registry import MEMORIES, Registered
from videomem.store.clips import scope_sql
from videomem.store import Store


@contextmanager
def live(app: Any, log_level: str = "warning") -> Iterator[str]:
    """Serve `app` on 127.0.0.1 until the block ends; yields its base URL."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level=log_level))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()


def copy_store(src: Path, dst: Path) -> Path:
    """Copy a store no one is writing to (database, WAL, frames, indexes)."""
    shutil.copytree(src, dst)
    return dst


def sse(lines: Iterable[str]) -> list[tuple[str, Any]]:
    """The events of a `text/event-stream` body, each with its JSON data; comments are skipped."""
    events, event, data = [], "message", []
    for line in lines:
        if not line:
            if data:
                events.append((event, json.loads("\n".join(data))))
            event, data = "message", []
        elif line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
    if data:
        events.append((event, json.loads("\n".join(data))))
    return events


def register_memory(monkeypatch: pytest.MonkeyPatch, name: str, entry: Registered) -> None:
    """Register a memory for one test, as a plug-in would: its entry and its name (undone after)."""
    monkeypatch.setitem(MEMORIES, name, entry)
    monkeypatch.setattr(core, "MEMORY_NAMES", (*core.MEMORY_NAMES, name))


class ClockMemory:
    """Clock memory: which clips a time of day falls in. Query by a time."""

    def __init__(self, store: Store, models: object) -> None:
        self.store = store

    def retrieve(self, query: str, top_k: int, until: float | None = None, video_id: str | None = None) -> list[Evidence]:
        where, params = scope_sql(until, video_id)
        rows = self.store.query(
            f"SELECT video_id, t_start, t_end FROM clips {'WHERE ' + where if where else ''} ORDER BY t_start LIMIT ?",
            (*params, top_k),
        )
        return [Evidence(r["t_start"], r["t_end"], f"clip at {r['t_start']:g} s", "clock", 1.0, r["video_id"]) for r in rows]

    def stats(self) -> dict[str, int]:
        return {"clips": self.store.query("SELECT COUNT(*) AS n FROM clips")[0]["n"]}
