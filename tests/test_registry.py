"""A memory registered once appears in every view over the registry: agent profiles and tools,
`videomem search`, `videomem info`, the HTTP server and the MCP server. (Stage order and
construction do not come from the registry yet: docs/architecture.md.)"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
from fastapi.testclient import TestClient
from live_server import register_memory
from mcp import Client
from memory_stores import hand_store, offline_models
from typer.testing import CliRunner

from videomem import core
from videomem.agent.tools import Memories, Toolbox
from videomem.cli import app
from videomem.config import AgentConfig, load_agent
from videomem.evidence import Evidence
from videomem.memory.registry import MEMORIES, Registered
from videomem.server.app import create_app
from videomem.server.mcp_server import build_server
from videomem.server.readers import Readers
from videomem.server.summary import summarize
from videomem.store import Store


class ToyMemory:
    """Toy memory: the first clips of the store, each as 'toy <n>'. Query with anything."""

    def __init__(self, store: Store, models: object) -> None:
        self.store = store

    def retrieve(self, query: str, top_k: int, until: float | None = None, video_id: str | None = None) -> list[Evidence]:
        rows = self.store.query("SELECT video_id, idx, t_start, t_end FROM clips ORDER BY t_start LIMIT ?", (top_k,))
        return [Evidence(r["t_start"], r["t_end"], f"toy {r['idx']}", "toy", 1.0, r["video_id"]) for r in rows]

    def stats(self) -> dict[str, int]:
        return {"toys": self.store.query("SELECT COUNT(*) AS n FROM clips")[0]["n"]}


def test_the_built_in_memories_are_registered_under_the_core_names() -> None:
    assert tuple(MEMORIES) == core.MEMORY_NAMES


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
