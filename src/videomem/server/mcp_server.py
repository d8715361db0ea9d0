"""`videomem mcp`: the agent's tools and `ask` as an MCP server (the official `mcp` SDK),
over stdio or streamable HTTP.

Tools are what the agent's planner sees: every tool the agent profile enables
(`video.retrieval`, `video.rag`, `video.qa`, ...) and the `memory.<name>` tool of every
registered memory, with the planner's JSON schemas (Toolbox), so memories registered later
appear without changes here. Each also takes an optional `until` and `video_id` that scope it
as they scope a question. `ask` runs the whole agent. A result is the observation (or the
answer) as text, and as structured content the evidence: time ranges, source, score, video
and stored frame paths. Calls run on the same reader threads as the HTTP server.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server
from mcp.server.stdio import stdio_server
from pydantic import BaseModel, ConfigDict, ValidationError

from videomem import __version__
from videomem.agent.tools import ToolCallError, Toolbox
from videomem.config import AgentConfig, tool_names
from videomem.errors import VideomemError
from videomem.memory.registry import MEMORIES
from videomem.config import tool_name
from videomem.models.registry import ModelSet
from videomem.server.auth import TokenGate
from videomem.server.guards import BodyLimit
from videomem.server.readers import AskRequest, Reader, Readers
from videomem.timeline import TimeArgument

ASK = "ask"


class Scope(BaseModel):
    """What every tool takes besides its own arguments: the question's query time and video."""

    model_config = ConfigDict(extra="forbid")

    until: TimeArgument | None = None
    video_id: str | None = None


def exposed(agent: AgentConfig) -> AgentConfig:
    """The agent profile with every registered memory's tool enabled as well."""
    extra = tuple(tool_name(m) for m in MEMORIES if tool_name(m) not in agent.tools)
    return agent.model_copy(update={"tools": tuple(t for t in tool_names() if t in agent.tools + extra)})


def _tools(reader: Reader, agent: AgentConfig) -> list[types.Tool]:
    scope = Scope.model_json_schema()["properties"]
    scope["video_id"]["description"] = "only this video (file name without extension)"
    tools = []
    for schema in Toolbox(reader.store, reader.agent.models, reader.agent.memories, agent).schemas():
        parameters = schema["parameters"]
        parameters = {**parameters, "properties": {**parameters.get("properties", {}), **scope}}
        tools.append(types.Tool(name=schema["name"], description=schema["description"], input_schema=parameters))
    ask = AskRequest.model_json_schema()
    ask.pop("title", None)
    tools.append(
        types.Tool(name=ASK, description="Answer a question about the videos with the whole agent.", input_schema=ask)
    )
    return tools


def _call(reader: Reader, agent: AgentConfig, name: str, arguments: dict[str, Any], scope: Scope) -> dict[str, Any]:
    toolbox = Toolbox(
        reader.store, reader.agent.models, reader.agent.memories, agent, until=scope.until, video_id=scope.video_id
    )
    result = toolbox.call(name, arguments)
    return {"observation": result.observation, "evidence": [e.to_json() for e in result.evidence]}


def _failed(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=message)], is_error=True)


def build_server(readers: Readers) -> Server:
    agent = exposed(readers.cfg)

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=await readers.run(lambda reader: _tools(reader, agent)))

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        arguments = dict(params.arguments or {})
        if params.name != ASK and params.name not in agent.tools:  # `finish` is the planner's, not a tool
            return _failed(f"unknown tool {params.name!r}")
        try:
            if params.name == ASK:
                request = AskRequest.model_validate(arguments)
                data = await readers.run(lambda reader: reader.ask(request))
                text = data["answer"]
            else:
                scope = Scope.model_validate({k: arguments.pop(k) for k in ("until", "video_id") if k in arguments})
                data = await readers.run(lambda reader: _call(reader, agent, params.name, arguments, scope))
                text = data["observation"]
        except ValidationError as err:
            return _failed(f"invalid arguments for {params.name}: {err.errors()[0]['msg']}")
        except (ToolCallError, VideomemError) as exc:
            return _failed(str(exc))
        return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=data)

    return Server(
        "videomem",
        version=__version__,
        instructions="Tools over a long video's memory. Times are corpus seconds or clock text; "
        "`until` answers as of that moment.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def serve_stdio(store_dir: Path, models: ModelSet, agent: AgentConfig) -> None:
    readers = Readers(store_dir, models, agent)
    server = build_server(readers)

    async def main() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    try:
        anyio.run(main)
    finally:
        readers.close()


def serve_http(
    store_dir: Path, models: ModelSet, agent: AgentConfig, *, host: str, port: int, token: str | None
) -> None:
    """Streamable HTTP at http://host:port/mcp."""
    import uvicorn

    readers = Readers(store_dir, models, agent)
    app = BodyLimit(build_server(readers).streamable_http_app(host=host))
    try:
        uvicorn.run(TokenGate(app, token) if token else app, host=host, port=port)
    finally:
        readers.close()
