"""A memory registered once appears in every view over the registry: agent profiles and tools,
`videomem search`, `videomem info`, the HTTP server, the MCP server, and the stages: `ingest`
builds it (in the order its dependencies give, resumably) and `--stages` accepts it."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import anyio
import pytest
from fastapi.testclient import TestClient
from live_server import register_memory
from mcp import Client
from pydantic import Field
from memory_stores import hand_store, offline_models
from typer.testing import CliRunner

from videomem import core
from videomem.agent.tools import Memories, ToolCallError, Toolbox
from videomem.cli import app
from videomem.config import CAPTIONED, PIPELINE_STAGES, AgentConfig, PipelineConfig, load_agent, stage_names
from videomem.core import StageResult
from videomem.errors import ConfigError
from videomem.evidence import Evidence
from videomem.memory import registry
from videomem.memory.build import BuildContext
from videomem.memory.registry import MEMORIES, Registered, stage_order
from videomem.pipeline.runner import ingest
from videomem.server.app import create_app
from videomem.server.jobs import IngestRequest
from videomem.server.mcp_server import build_server
from videomem.server.readers import Readers
from videomem.server.summary import summarize
from videomem.store import Store
from videomem.store.clips import clips_of


class ToyMemory:
    """Toy memory: the first clips of the store, each as 'toy <n>'. Query with anything."""

    name = "toy"

    def __init__(self, store: Store, models: object) -> None:
        self.store = store

    def build(self, ctx: BuildContext, video_ids: Sequence[str]) -> StageResult:
        """One unit per clip of these videos, each committed with its progress mark."""
        result = StageResult(self.name)
        done = self.store.done_units(self.name)
        for clip in clips_of(self.store, video_ids):
            if clip.unit in done:
                result.skipped += 1
                continue
            with self.store.transaction() as tx:
                Store.mark_done(tx, self.name, clip.unit)
            result.done += 1
        return result

    @staticmethod
    def reset(store: Store, video_ids: Sequence[str]) -> None:
        units = [(ToyMemory.name, c.unit) for c in clips_of(store, video_ids)]
        with store.transaction() as tx:
            tx.executemany("DELETE FROM stage_progress WHERE stage = ? AND unit = ?", units)

    def retrieve(self, query: str, top_k: int, until: float | None = None, video_id: str | None = None) -> list[Evidence]:
        rows = self.store.query("SELECT video_id, idx, t_start, t_end FROM clips ORDER BY t_start LIMIT ?", (top_k,))
        return [Evidence(r["t_start"], r["t_end"], f"toy {r['idx']}", "toy", 1.0, r["video_id"]) for r in rows]

    def stats(self) -> dict[str, int]:
        return {"toys": self.store.query("SELECT COUNT(*) AS n FROM clips")[0]["n"]}


def test_the_built_in_memories_are_registered_under_the_core_names() -> None:
    assert tuple(MEMORIES) == core.MEMORY_NAMES
    built = {name for name, entry in MEMORIES.items() if entry.builds}
    assert set(stage_order()) == set(stage_names()) == set(PIPELINE_STAGES) | built
    assert set(MEMORIES) - built == {CAPTIONED}, "the caption stage fills one memory; every other has a build"


def test_the_stage_order_follows_the_builds_dependencies(monkeypatch) -> None:
    assert stage_order() == ("sample", "transcribe", "caption", "objects", "episodic", "semantic", "timeline", "visual")
    # a memory registered first but reading the semantic memory is built after it
    late = Registered(ToyMemory, after=("semantic",))
    monkeypatch.setattr(registry, "MEMORIES", {"toy": late, **MEMORIES})
    order = stage_order()
    assert order.index("toy") > order.index("semantic") and order[:4] == ("sample", "transcribe", "caption", "objects")

    monkeypatch.setattr(registry, "MEMORIES", {**MEMORIES, "toy": Registered(ToyMemory, after=("dance",))})
    with pytest.raises(ConfigError, match="memory 'toy' is built after 'dance', which is no stage"):
        stage_order()
    cycle = {**MEMORIES, "toy": Registered(ToyMemory, after=("visual",))}
    cycle["visual"] = Registered(MEMORIES["visual"].cls, after=("toy",))
    monkeypatch.setattr(registry, "MEMORIES", cycle)
    with pytest.raises(ConfigError, match="the builds of visual, toy each wait for another") as info:
        stage_order()
    assert "\n" not in str(info.value)


def test_a_toy_memory_with_a_build_is_a_stage_ingest_runs(tmp_path: Path, monkeypatch, bikes: Path, run_cli) -> None:
    register_memory(monkeypatch, "toy", Registered(ToyMemory, after=("sample",)))
    models = offline_models()
    store_dir = tmp_path / "store"

    # 6. the stage list: profiles, --stages and the server's ingest requests accept it
    assert "toy" in stage_names()
    assert PipelineConfig(stages=("toy", "sample")).stages == ("sample", "toy")
    assert IngestRequest(paths=["x.mp4"], stages=["toy"]).stages == ["toy"]
    refused = run_cli("ingest", bikes, "--store", store_dir, "--stages", "sample,dance")
    assert refused.code != 0 and "allowed: sample, transcribe, caption, objects" in refused.output
    assert "toy" in refused.output and not store_dir.exists()
    pipeline = PipelineConfig(clip_seconds=2, frames_per_clip=1, stages=("sample", "toy"))

    # ingest builds it after the stage it reads, one unit per clip (bikes.mp4: 10 s, five 2-s clips)
    with Store(store_dir, create=True) as store:
        report = ingest([bikes], store, pipeline, lambda: models, stages=["toy", "sample"], show_progress=False)
        assert report.ok, report.all_failures()
        assert [(r.stage, r.done) for r in report.results] == [("sample", 5), ("toy", 5)]
        assert store.done_units("toy") == {c.unit for c in clips_of(store, ["bikes"])}

        # a re-run skips what is done; a unit lost to a kill is built again, alone
        with store.transaction() as tx:
            tx.execute("DELETE FROM stage_progress WHERE stage = 'toy' AND unit = 'bikes:3'")
        again = ingest([bikes], store, pipeline, lambda: models, show_progress=False).results[-1]
        assert (again.stage, again.done, again.skipped) == ("toy", 1, 4)

        # --force forgets it through its reset and builds it again
        forced = ingest([bikes], store, pipeline, lambda: models, stages=["toy"], force=True, show_progress=False)
        assert [(r.stage, r.done, r.skipped) for r in forced.results] == [("toy", 5, 0)]

    # the command line takes it as a stage too
    done = run_cli("ingest", bikes, "--store", store_dir, "--stages", "toy")
    assert done.code == 0, done.output
    with Store(store_dir, read_only=True) as db:
        assert summarize(db, models).stages["toy"] == 5


def test_a_memory_without_a_build_is_no_stage_to_run(tmp_path: Path, monkeypatch, bikes: Path) -> None:
    class Unbuilt:
        """Unbuilt memory: registered with no build."""

        name = "unbuilt"

    register_memory(monkeypatch, "unbuilt", Registered(Unbuilt))
    with Store(tmp_path / "store", create=True) as store:
        with pytest.raises(ConfigError, match="'unbuilt' has no build"):
            ingest([bikes], store, PipelineConfig(), offline_models, stages=["sample", "unbuilt"], show_progress=False)
        assert not store.done_units("sample"), "refused before any work"


def test_a_toy_memory_appears_in_every_view(tmp_path: Path, monkeypatch) -> None:
    store = hand_store(tmp_path / "store", [None] * 3)
    store_dir = store.root
    store.close()
    register_memory(monkeypatch, "toy", Registered(ToyMemory))
    models = offline_models()

    # 1. agent: a profile may enable its tool, and the tool lists what it retrieves
    cfg = AgentConfig(tools=("video.retrieval", "memory.toy"))
    with Store(store_dir, read_only=True) as db:
        toolbox = Toolbox(db, models, Memories.open(db, models, cfg), cfg)
        assert "Toy memory: the first clips" in {t["name"]: t for t in toolbox.schemas()}["memory.toy"]["description"]
        assert toolbox.call("memory.toy", {"query": "x", "top_k": 2}).observation.startswith("From toy memory:\n1. ")

        # 2. info
        assert summarize(db, models).memories["toy"] == {"toys": 3}

    # 3. search
    found = CliRunner().invoke(app, ["search", "x", "--store", str(store_dir), "--memory", "toy", "--json", "-k", "2"])
    assert found.exit_code == 0, found.output
    assert [e["text"] for e in json.loads(found.output)] == ["toy 0", "toy 1"]

    # 4. the HTTP server: /info and the memory's search route
    with TestClient(create_app(store_dir, models, load_agent()), base_url="http://localhost") as client:  # a host the guard accepts
        info = client.get("/info").json()
        assert {m["name"]: m["stats"] for m in info["memories"]}["toy"] == {"toys": 3}
        assert [e["text"] for e in client.get("/memories/toy/search", params={"query": "x", "top_k": 1}).json()] == ["toy 0"]

    # 5. the MCP server
    readers = Readers(store_dir, models, load_agent())

    async def tools() -> list[str]:
        async with Client(build_server(readers)) as mcp:
            return [tool.name for tool in (await mcp.list_tools()).tools]

    try:
        assert "memory.toy" in anyio.run(tools)
    finally:
        readers.close()


def test_a_memory_of_frames_gets_the_looking_tool_by_its_entry_not_its_name(tmp_path: Path, monkeypatch) -> None:
    from videomem.memory.visual import VisualMemory

    store = hand_store(tmp_path / "store", [None] * 3)
    register_memory(monkeypatch, "frames", Registered(VisualMemory, tool="look"))
    cfg = AgentConfig(tools=("memory.frames", "memory.events"))
    toolbox = Toolbox(store, offline_models(), Memories.open(store, offline_models(), cfg), cfg)
    schemas = {t["name"]: t for t in toolbox.schemas()}
    assert schemas["memory.frames"]["description"].startswith("Visual memory, looked at by the vision-language model")
    assert "time range" in schemas["memory.frames"]["parameters"]["properties"]["query"]["description"]
    assert schemas["memory.events"]["description"] == MEMORIES["events"].description
    store.close()


class CountingMemory(ToyMemory):
    """Counting memory: how many clips there are. Ask it for a count."""

    def tool(
        self, until: float | None, video_id: str | None, what: Annotated[str, Field(description="what to count")] = "clips"
    ) -> tuple[str, list[Evidence]]:
        """Counting memory: counts the clips recorded by the query time."""
        found = self.retrieve(what, 100, until, video_id)
        return f"{len(found)} {what}", found[:1]


def test_a_memory_with_its_own_tool_declares_its_arguments(tmp_path: Path, monkeypatch) -> None:
    store = hand_store(tmp_path / "store", [None] * 3)
    register_memory(monkeypatch, "count", Registered(CountingMemory, tool="own"))
    cfg = AgentConfig(tools=("memory.count",))
    toolbox = Toolbox(store, offline_models(), Memories.open(store, offline_models(), cfg), cfg)
    schema = {t["name"]: t for t in toolbox.schemas()}["memory.count"]
    assert schema["description"] == "Counting memory: counts the clips recorded by the query time."
    assert list(schema["parameters"]["properties"]) == ["what"], "the question's scope is not an argument"
    assert toolbox.call("memory.count", {"what": "clips"}).observation.startswith("From count memory, 3 clips\n1. ")
    with pytest.raises(ToolCallError, match="what: Input should be a valid string"):
        toolbox.call("memory.count", {"what": 3})
    store.close()
