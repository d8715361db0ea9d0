"""`videomem mcp`: the agent's tools and `ask` over MCP. The SDK's own client talks to a real
`videomem mcp` subprocess over stdio; in-process, a memory registered later shows up as a
tool, and the streamable HTTP transport answers behind the token."""

from __future__ import annotations

import os
import sys

import anyio
import httpx
import httpx2
import pytest
from live_server import ClockMemory, live, register_memory
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from memory_stores import late_question, offline_models, scripted_store

from videomem.config import load_agent, tool_names
from videomem.memory.registry import Registered
from videomem.server.auth import TokenGate
from videomem.server.mcp_server import build_server
from videomem.server.readers import Readers


def expected_tools() -> list[str]:
    """The default agent's tools and every registered memory's tool (in the order agent
    profiles list tools), then `ask`."""
    enabled = load_agent().tools
    return [t for t in tool_names() if t in enabled or t.startswith("memory.")] + ["ask"]


@pytest.fixture(scope="module")
def scripted(tmp_path_factory):
    return scripted_store(tmp_path_factory.getbasetemp())


@pytest.mark.slow
def test_stdio_server_lists_the_tools_and_answers_with_evidence(scripted) -> None:
    store_dir, corpus = scripted
    q, event = late_question(corpus)
    env = {"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else None
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "videomem.cli", "mcp", "--store", str(store_dir)], env=env
    )

    async def session() -> dict:
        async with Client(server, read_timeout_seconds=300) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            found = await client.call_tool("memory.events", {"query": event.text.capitalize(), "top_k": 3})
            hidden = await client.call_tool("video.retrieval", {"query": event.text, "until": event.t_start - 20})
            malformed = await client.call_tool("video.qa", {"question": "what?", "t_start": "soon"})
            answer = await client.call_tool("ask", {"question": q.question, "choices": list(q.choices)})
            return {"tools": tools, "found": found, "hidden": hidden, "malformed": malformed, "answer": answer}

    got = anyio.run(session)
    tools = got["tools"]
    assert list(tools) == expected_tools() and {"video.qa", "memory.events"} <= set(tools)
    assert tools["video.qa"].input_schema["required"] == ["question", "t_start", "t_end"]
    assert {"until", "video_id"} <= set(tools["memory.events"].input_schema["properties"])
    assert tools["ask"].input_schema["required"] == ["question"]

    found = got["found"]
    assert not found.is_error and found.content[0].text.startswith("From events memory:\n1. ")
    evidence = found.structured_content["evidence"]
    assert len(evidence) == 3 and evidence[0]["source"] == "event" and evidence[0]["video_id"] == q.video_id
    assert evidence[0]["t_start"] < event.t_end and evidence[0]["t_end"] > event.t_start

    hidden = got["hidden"].structured_content["evidence"]
    assert hidden and all(e["t_end"] <= event.t_start - 20 for e in hidden)

    malformed = got["malformed"]
    assert malformed.is_error and "invalid arguments for video.qa" in malformed.content[0].text

    answer = got["answer"].structured_content
    assert answer["choice"] == q.answer and got["answer"].content[0].text == answer["answer"]
    assert any(e["t_start"] < event.t_end and e["t_end"] > event.t_start for e in answer["evidence"])
    assert answer["trace"][-1]["tool"] == "answer"


def test_a_memory_registered_later_is_an_mcp_tool(scripted, monkeypatch) -> None:
    store_dir, _ = scripted
    register_memory(monkeypatch, "clock", Registered(ClockMemory))
    readers = Readers(store_dir, offline_models(), load_agent())

    async def session():
        async with Client(build_server(readers)) as client:
            names = [tool.name for tool in (await client.list_tools()).tools]
            result = await client.call_tool("memory.clock", {"query": "noon", "top_k": 1, "until": "00:00:15"})
            scoped = await client.call_tool("memory.clock", {"query": "noon", "video_id": "nope"})
            return names, result, scoped

    try:
        names, result, scoped = anyio.run(session)
    finally:
        readers.close()
    assert names == expected_tools() and names[-2:] == ["memory.clock", "ask"]
    assert [e["t_start"] for e in result.structured_content["evidence"]] == [0.0]
    assert scoped.structured_content["evidence"] == [] and "No memory entries found" in scoped.content[0].text


def test_streamable_http_transport_behind_the_token(scripted) -> None:
    store_dir, _ = scripted
    readers = Readers(store_dir, offline_models(), load_agent())
    app = TokenGate(build_server(readers).streamable_http_app(host="127.0.0.1"), "s3cret")

    async def tool_names(url: str) -> list[str]:
        async with httpx2.AsyncClient(headers={"Authorization": "Bearer s3cret"}) as http:
            async with Client(streamable_http_client(url, http_client=http)) as client:
                return [tool.name for tool in (await client.list_tools()).tools]

    try:
        with live(app) as base:
            assert httpx.post(f"{base}/mcp", json={}).status_code == 401
            assert httpx.post(f"{base}/mcp", params={"token": "s3cret"}, json={}).status_code == 401  # login page only
            assert anyio.run(tool_names, f"{base}/mcp") == expected_tools()
    finally:
        readers.close()
