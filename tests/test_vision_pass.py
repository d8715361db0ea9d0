"""The clip stages' vision pass: one VLM request per clip for caption and objects, a clip whose
output stays unusable recorded as failed while the others go on, and a re-run that retries
only the failed clips. Runs the real prompted tasks over a scripted engine on a hand-made store."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

from kill_stage import ScriptedModels
from memory_stores import hand_store

from videomem.config import PipelineConfig, RoleConfig
from videomem.core import VideoSource
from videomem.models.engines import Generation, LMRequest, VLRequest
from videomem.models.usage import Usage
from videomem.models.prompted import PromptedVision
from videomem.pipeline.base import MemoryStage, StageContext
from videomem.pipeline.caption import CaptionStage
from videomem.store import Store

PIPELINE = PipelineConfig(caption_batch_size=2, object_batch_size=4)
VIDEO = [VideoSource(Path("v.mp4"), "v")]


class ClipEngine:
    """Answers each clip request by the clip's start time; clips starting at a time in `broken`
    get prose instead of JSON. Records every request."""

    def __init__(self, broken: Sequence[str] = ()) -> None:
        self.broken = set(broken)
        self.requests: list[VLRequest | LMRequest] = []

    def generate(self, requests: Sequence[VLRequest | LMRequest]) -> list[Generation]:
        self.requests += requests
        out = []
        for request in requests:
            start = re.search(r"runs from (\S+) to", request.prompt).group(1)
            notes = {
                "caption": f"A clip starting at {start}.",
                "objects": [{"name": "man in red", "kind": "person", "value": f"waves at {start}"}],
            }
            text = f"Sorry, I cannot see clip {start} clearly." if start in self.broken else json.dumps(notes)
            out.append(Generation(text, Usage(100, 20, 0.01, 1), "stop"))
        return out


def run(store: Store, engine: ClipEngine, stages: tuple[str, ...] = ("caption", "objects")) -> dict:
    vision = PromptedVision(engine, RoleConfig(backend="openai", model="clip-vlm", base_url="http://x", json_repairs=1))
    ctx = StageContext(store, PIPELINE, lambda: ScriptedModels(vision=vision), show_progress=False, stages=stages)
    results = {}
    for stage in (CaptionStage(), MemoryStage("objects")):
        if stage.name in stages:
            results[stage.name] = stage.run(ctx, VIDEO)
    return results


def test_caption_and_objects_come_from_one_request_per_clip(tmp_path: Path) -> None:
    store = hand_store(tmp_path, ["ONE", "TWO", None, "FOUR", "FIVE"])
    engine = ClipEngine()
    results = run(store, engine)
    assert len(engine.requests) == 5, "one request per clip for both memories"
    assert all("one record per person" in r.prompt and '"objects"' in json.dumps(r.json_schema) for r in engine.requests)
    assert all(len(r.images) == 2 for r in engine.requests)
    assert (results["caption"].done, results["objects"].done, results["objects"].skipped) == (5, 5, 0)
    events = [r[0] for r in store.query("SELECT text FROM events ORDER BY t_start")]
    assert events[3] == "A clip starting at 00:00:30."
    values = [r[0] for r in store.query("SELECT value FROM object_observations ORDER BY t_start")]
    assert values == [f"waves at 00:00:{t:02d}" for t in range(0, 50, 10)]
    linked = store.query("SELECT COUNT(DISTINCT object_id) FROM object_observations")[0][0]
    assert linked == 1, "consolidation still ran: one man in red"

    only_captions = hand_store(tmp_path / "b", ["ONE", "TWO"])
    captioner = ClipEngine()
    run(only_captions, captioner, stages=("caption",))
    assert all("one short caption per clip" in r.prompt for r in captioner.requests)
    assert only_captions.query("SELECT COUNT(*) FROM object_observations")[0][0] == 0


def test_an_unusable_clip_is_recorded_the_rest_go_on_and_a_rerun_retries_only_it(tmp_path: Path, run_cli) -> None:
    store = hand_store(tmp_path / "s", ["ONE", "TWO", "THREE", "FOUR", "FIVE"])
    first = run(store, ClipEngine(broken=["00:00:20"]))
    for stage in ("caption", "objects"):
        assert first[stage].done == 4
        assert [unit for unit, _ in first[stage].failures] == ["v:2"]
    assert store.query("SELECT COUNT(*) FROM events")[0][0] == 4
    rows = store.failures()
    assert [(r["stage"], r["unit"], r["reply"]) for r in rows] == [
        ("caption", "v:2", "Sorry, I cannot see clip 00:00:20 clearly."),
        ("objects", "v:2", "Sorry, I cannot see clip 00:00:20 clearly."),
    ]
    assert "no JSON object" in rows[0]["error"]
    store.close()

    info = run_cli("info", "--store", tmp_path / "s")
    assert info.code == 0
    failed = [line for line in info.stdout.splitlines() if line.startswith("failed ")]
    assert len(failed) == 2 and failed[0].startswith("failed caption v:2 (1 run(s)")
    assert "reply: Sorry, I cannot see clip 00:00:20 clearly." in failed[0]

    store = Store(tmp_path / "s")
    again = ClipEngine()
    second = run(store, again)
    assert [re.search(r"runs from (\S+)", r.prompt).group(1) for r in again.requests] == ["00:00:20"]
    assert (second["caption"].done, second["caption"].skipped, second["caption"].failures) == (1, 4, [])
    assert store.failures() == [] and store.query("SELECT COUNT(*) FROM events")[0][0] == 5
    assert store.query("SELECT COUNT(*) FROM object_observations")[0][0] == 5
