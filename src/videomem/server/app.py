"""`videomem serve`: the HTTP API and the web page over one store (FastAPI; docs at /docs).

    GET  /                          the web page: player, question box, steps, answer, evidence
    GET  /info                      videos, clips, stages, each memory's size, the agent's tools
    POST /ask                       server-sent events: `step` per agent step, then `answer` or `error`
    GET  /memories/{name}/search    what one memory returns for a query
    GET  /videos/{video_id}         a video of the store (range requests, so the player can seek)
    GET  /frames/{path}             a stored frame (the URLs evidence carries in `frame_urls`)
    POST /ingest                    start an ingest in the background (one at a time), of
                                    files under the server's `--ingest-root` folders only
    GET  /ingest, /ingest/{job_id}  jobs and their progress

Memories come from the registry and tools from the agent's Toolbox, so ones added later
appear here without changes. Only files of the store are served: videos by id from its
`videos` table, frames by paths that stay inside its `frames/` folder once resolved (`..`,
absolute paths, encoded escapes and symlinks leading out all get 404).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import AsyncIterator, Sequence
from concurrent.futures import Future
from contextlib import asynccontextmanager
from pathlib import Path
from textwrap import shorten
from typing import Annotated, Any

from fastapi import FastAPI, HTTPException, Query, Request
from fastapi.responses import FileResponse, JSONResponse
from fastapi.sse import EventSourceResponse, ServerSentEvent
from fastapi.staticfiles import StaticFiles
from starlette.middleware.trustedhost import TrustedHostMiddleware

from videomem.agent.tools import MAX_TOP_K, Toolbox
from videomem.config import AgentConfig
from videomem.errors import VideomemError
from videomem.memory.registry import MEMORIES
from videomem.models.registry import ModelSet
from videomem.server.auth import TokenGate
from videomem.server.guards import LOOPBACK_HOSTS, BodyLimit, SameOrigin
from videomem.server.jobs import IngestBusy, IngestRefused, IngestRequest, Jobs
from videomem.server.readers import AskAbandoned, AskRequest, Reader, Readers, video_url
from videomem.server.summary import summarize
from videomem.store.clips import require_video
from videomem.timeline import parse_time

log = logging.getLogger(__name__)
LOGGED_CHARS = 200
"""Characters of a failed question that its log line quotes."""
STATIC = Path(__file__).parent / "static"


def stored_frame(frames_dir: Path, relative: str) -> Path | None:
    """The file `frames_dir/relative` if it is a regular file inside `frames_dir` once every
    symlink and `..` is resolved; None for anything else."""
    try:
        path = (frames_dir / relative).resolve(strict=True)
    except (OSError, RuntimeError, ValueError):  # missing, a symlink loop, a NUL byte
        return None
    return path if path.is_relative_to(frames_dir) and path.is_file() else None


def load_roles(models: ModelSet, agent: AgentConfig) -> None:
    """Build the roles questions use before the first one arrives: once per process, and a
    bad profile fails at start rather than in a user's question."""
    for role in ("text_embedder", "language", "vision"):
        if role != "vision" or "video.qa" in agent.tools:
            getattr(models, role)


def create_app(
    store_dir: Path,
    models: ModelSet,
    agent: AgentConfig,
    *,
    token: str | None = None,
    threads: int = 8,
    ingest_roots: Sequence[Path] = (),
    hosts: Sequence[str] = LOOPBACK_HOSTS,
) -> FastAPI:
    """The app over an existing store; `threads` questions are answered at once. `POST /ingest`
    reads only under `ingest_roots` (none: remote ingest is off); requests must name one of
    `hosts` (guards.py)."""
    readers = Readers(store_dir, models, agent, threads)
    jobs = Jobs(store_dir, models, on_done=readers.refresh, roots=ingest_roots)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        await asyncio.to_thread(load_roles, models, agent)
        yield
        readers.close()

    app = FastAPI(
        title="videomem",
        summary="Ask questions of a long video's memory.",
        description=__doc__,
        lifespan=lifespan,
    )
    app.state.jobs = jobs
    if token:
        app.add_middleware(TokenGate, token=token)
    app.add_middleware(BodyLimit)
    app.add_middleware(SameOrigin)
    app.add_middleware(TrustedHostMiddleware, allowed_hosts=list(hosts))  # added last: checked first

    @app.exception_handler(VideomemError)
    async def user_error(_: Request, exc: VideomemError) -> JSONResponse:
        status = 409 if isinstance(exc, IngestBusy) else 403 if isinstance(exc, IngestRefused) else 400
        return JSONResponse({"detail": str(exc)}, status_code=status)

    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.get("/", include_in_schema=False)
    async def page() -> FileResponse:
        return FileResponse(STATIC / "index.html")

    @app.get("/info")
    async def info() -> dict[str, Any]:
        """The store (videos with their URLs, clips, stages done), each registered memory with
        its size, and the agent with the schemas of its tools."""

        def work(reader: Reader) -> dict[str, Any]:
            summary = summarize(reader.store, models)
            return {
                "store": str(store_dir),
                "timeline": summary.timeline,
                "videos": [{**v, "url": video_url(v["id"])} for v in summary.videos],
                "clips": summary.clips,
                "hours": summary.hours,
                "stages": summary.stages,
                "memories": [
                    {
                        "name": name,
                        "description": MEMORIES[name].description,
                        "stats": stats,
                        "search": f"/memories/{name}/search",
                    }
                    for name, stats in summary.memories.items()
                ],
                "agent": {
                    "name": agent.name,
                    "kind": agent.kind,
                    "tools": Toolbox(reader.store, models, reader.agent.memories, agent).schemas(),
                },
                "models": models.cfg.name,
            }

        return await readers.run(work)

    @app.post("/ask", response_class=EventSourceResponse)
    async def ask(request: AskRequest) -> AsyncIterator[ServerSentEvent]:
        """Answer a question. Streams `step` events (one per agent step, with its evidence) as
        they happen, then one `answer` event (answer, choice, evidence with time ranges, scores
        and frame URLs, trace, tokens, seconds), or one `error` event. A question whose client
        leaves stops at its next step (or never starts), freeing its reader thread."""
        loop = asyncio.get_running_loop()
        events: asyncio.Queue[ServerSentEvent] = asyncio.Queue()
        abandoned = threading.Event()

        def put(event: str, data: dict[str, Any]) -> None:
            loop.call_soon_threadsafe(events.put_nowait, ServerSentEvent(event=event, data=data))

        def step(data: dict[str, Any]) -> None:
            if abandoned.is_set():
                raise AskAbandoned("the client left")
            put("step", data)

        def finished(future: Future) -> None:
            exc = None if future.cancelled() else future.exception()
            if future.cancelled() or isinstance(exc, AskAbandoned):
                return
            if exc is None:
                put("answer", future.result())
            elif isinstance(exc, VideomemError):
                put("error", {"detail": str(exc)})
            else:
                log.error("question failed: %r", shorten(request.question, LOGGED_CHARS), exc_info=exc)
                put("error", {"detail": f"internal error: {type(exc).__name__}: {exc}"})

        work = readers.submit(lambda reader: reader.ask(request, on_step=step))
        work.add_done_callback(finished)
        try:
            while True:
                event = await events.get()
                yield event
                if event.event != "step":
                    return
        finally:  # the answer was sent, or the client left (the stream is cancelled)
            abandoned.set()
            work.cancel()

    @app.get("/memories/{name}/search")
    async def search(
        name: str,
        query: Annotated[str, Query(min_length=1, description="what to look for")],
        top_k: Annotated[int, Query(ge=1, le=MAX_TOP_K)] = 5,
        until: Annotated[str | None, Query(description="query time: seconds, HH:MM:SS or 'DAY1 11:09:42'")] = None,
        video_id: str | None = None,
    ) -> list[dict[str, Any]]:
        """The entries one memory returns for `query` (what its `memory.<name>` tool sees), best
        first, among those recorded by `until`, in `video_id`."""
        if name not in MEMORIES:
            raise HTTPException(404, f"unknown memory {name!r}; available: {', '.join(MEMORIES)}")
        cutoff = parse_time(until) if until is not None else None

        def work(reader: Reader) -> list[dict[str, Any]]:
            require_video(reader.store, video_id)
            found = reader.agent.memories[name].retrieve(query, top_k, cutoff, video_id)
            return [{**reader.evidence(e.to_json()), "memory": name} for e in found]

        return await readers.run(work)

    @app.get("/videos/{video_id}", response_class=FileResponse)
    async def video(video_id: str) -> FileResponse:
        """The video file, with HTTP range requests."""
        rows = await readers.run(lambda reader: reader.store.query("SELECT path FROM videos WHERE id = ?", (video_id,)))
        path = Path(rows[0]["path"]) if rows else None
        if path is None or not path.is_file():
            # the server's own paths are not the client's business
            raise HTTPException(404, f"no video {video_id!r} in this store" if path is None else f"the file of video {video_id!r} is missing")
        return FileResponse(path)

    @app.get("/frames/{relative:path}", response_class=FileResponse)
    async def frame(relative: str) -> FileResponse:
        """A stored frame (JPEG)."""
        path = stored_frame(readers.frames_dir, relative)
        if path is None:
            raise HTTPException(404, "no such frame in this store")
        return FileResponse(path)

    @app.post("/ingest", status_code=202)
    async def start_ingest(request: IngestRequest) -> dict[str, Any]:
        """Start an ingest into this store in the background; poll `/ingest/{id}` for progress.
        409 while another ingest runs; 403 for paths or profiles outside the server's ingest
        roots, and for any request when it has none."""
        job = await asyncio.to_thread(jobs.start, request)  # reads the profile: not on the event loop
        return job.to_json()

    @app.get("/ingest")
    async def ingest_jobs() -> list[dict[str, Any]]:
        """Every ingest job of this server, oldest first."""
        return [job.to_json() for job in jobs.all()]

    @app.get("/ingest/{job_id}")
    async def ingest_job(job_id: int) -> dict[str, Any]:
        """One job: state (running, done, failed), the stage in hand and its progress, results
        per stage, failures, and the error that stopped it."""
        job = jobs.get(job_id)
        if job is None:
            raise HTTPException(404, f"no ingest job {job_id}")
        return job.to_json()

    return app
