"""Run fingerprints: everything an eval run's numbers depend on besides the questions.

A number is only worth comparing with another measured on the same footing, and a resumed run
is only one run if nothing changed between its halves. A fingerprint has four parts:

* `store` — schema version, the row count of every table, and a SHA-256 over every row of every
  memory table (captions, object records, frames, ... in row order; `meta` and stage progress are
  counted, not hashed: the pipeline is its own part and progress is bookkeeping);
* `pipeline` — the pipeline profile the store was built with, as the last ingest recorded it;
* `models`, `agent` — the validated profiles, every field with defaults filled in, so a YAML
  comment or key order changes nothing and a changed value always shows.

`Fingerprint.changes(before, parts)` names what differs, one short phrase per change, old
value first ("store rows: events 72 → 80"; "models: llm.temperature 0.0 → 0.7"), so a refusal
is one line a user can act on. Resuming needs every part equal; comparing two agents needs all
but `agent` (`SAME_FOOTING`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from typing import Any

from pydantic import BaseModel

from videomem.config import AgentConfig, ModelsConfig
from videomem.store import PIPELINE_META, Store

PARTS = ("store", "pipeline", "models", "agent")
SAME_FOOTING = ("store", "pipeline", "models")
"""What two runs must share for their numbers to be compared: all but the agent."""
_UNHASHED = ("meta", "stage_progress", "stage_failures")
SHOWN = 3
"""Differing keys named per part; the rest are counted."""


@dataclass(frozen=True)
class Fingerprint:
    store: dict[str, Any]
    """{"schema_version": int, "rows": {table: count}, "sha256": hex}."""
    pipeline: dict[str, Any] | None
    """The recorded pipeline profile, or None for a store no ingest recorded one in."""
    models: dict[str, Any]
    agent: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Fingerprint:
        return cls(**{part: data.get(part) for part in PARTS})

    def changes(self, before: Fingerprint, parts: tuple[str, ...] = PARTS) -> list[str]:
        """What changed from `before` to this fingerprint, part by part (empty: the same footing)."""
        found = []
        for part in parts:
            old, new = getattr(before, part), getattr(self, part)
            if old == new:
                continue
            if part == "store":
                found.append(_store_change(old, new))
            elif old is None or new is None:
                found.append(f"{part}: {_name(old)} → {_name(new)}")
            else:
                found.append(f"{part}: {_changed_keys(old, new)}")
        return found


def unlike(run: dict[str, Any], earlier: dict[str, Any], parts: tuple[str, ...] = PARTS) -> list[str]:
    """What changed from the eval run `earlier` to `run` (their run.json contents); a run
    recorded without a fingerprint is never on the same footing."""
    if "fingerprint" not in run or "fingerprint" not in earlier:
        return ["no fingerprint recorded (a run made by an older videomem)"]
    return Fingerprint.from_json(run["fingerprint"]).changes(Fingerprint.from_json(earlier["fingerprint"]), parts)


def fingerprint(store: Store, models: ModelsConfig, agent: AgentConfig) -> Fingerprint:
    recorded = store.meta(PIPELINE_META)
    return Fingerprint(store_fingerprint(store), json.loads(recorded) if recorded else None, _profile(models), _profile(agent))


def store_fingerprint(store: Store) -> dict[str, Any]:
    tables = [
        r[0] for r in store.query("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
                                  "ORDER BY name")
    ]
    digest = hashlib.sha256()
    rows = {}
    for table in tables:
        rows[table] = store.query(f'SELECT COUNT(*) FROM "{table}"')[0][0]
        if table in _UNHASHED:
            continue
        digest.update(f"\x1d{table}".encode())
        for row in store.conn.execute(f'SELECT * FROM "{table}" ORDER BY rowid'):
            digest.update(repr(tuple(row)).encode())
    return {"schema_version": store.schema_version, "rows": rows, "sha256": digest.hexdigest()}


def _profile(cfg: BaseModel) -> dict[str, Any]:
    return cfg.model_dump(mode="json")


def _name(profile: dict[str, Any] | None) -> str:
    return "none recorded" if profile is None else repr(profile.get("name"))


def _store_change(old: dict[str, Any], new: dict[str, Any]) -> str:
    if old.get("schema_version") != new.get("schema_version"):
        return f"store schema: v{old.get('schema_version')} → v{new.get('schema_version')}"
    a, b = old.get("rows", {}), new.get("rows", {})
    counts = [f"{t} {a.get(t, 0)} → {b.get(t, 0)}" for t in sorted(set(a) | set(b)) if a.get(t, 0) != b.get(t, 0)]
    if counts:
        more = f" (+{len(counts) - SHOWN} more tables)" if len(counts) > SHOWN else ""
        return "store rows: " + ", ".join(counts[:SHOWN]) + more
    return "store contents: same row counts, rows rewritten"


def _flat(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            out |= _flat(item, f"{prefix}{key}.")
        return out
    return {prefix.rstrip("."): value}


def _changed_keys(old: dict[str, Any], new: dict[str, Any]) -> str:
    a, b = _flat(old), _flat(new)
    keys = [k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
    shown = ", ".join(f"{k} {json.dumps(a.get(k))} → {json.dumps(b.get(k))}" for k in keys[:SHOWN])
    return shown + (f" (+{len(keys) - SHOWN} more)" if len(keys) > SHOWN else "")
