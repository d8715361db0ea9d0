"""Questions and searches, answered on a pool of threads that each hold their own Store.

SQLite connections belong to the thread that opened them, so every thread of the pool opens
its own Store and Agent on first use and keeps them: the agent's memories then load their
indexes once per thread, not once per question. The ModelSet is shared by all threads, so
models load once per process (as in the eval harness). After an ingest the server calls
`refresh()`: each thread reopens before its next question and sees the new memory.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, TypeVar
from urllib.parse import quote

from pydantic import BaseModel, ConfigDict, Field

from videomem.agent.answer import Answer
from videomem.agent.react import Agent
from videomem.config import AgentConfig
from videomem.core import MAX_OPTIONS
from videomem.errors import VideomemError
from videomem.models.registry import ModelSet
from videomem.store import Store
from videomem.store.clips import frames_between, timeline_kind
from videomem.core import MAX_ID_BYTES
from videomem.timeline import TimeArgument, TimeText

T = TypeVar("T")

THUMBNAILS = 4
"""Frames shown for an evidence entry that names none of its own (those of its time range)."""


MAX_QUESTION_CHARS = 2000
"""Longest question (and option) taken: benchmark questions are a few hundred characters, and
every character is tokenised, parsed and embedded several times per step."""


class AskAbandoned(VideomemError):
    """The client of a question left before its answer: the agent stops at its next step."""


class AskRequest(BaseModel):
    """A question as the HTTP API and the MCP `ask` tool take it."""

    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS, pattern=r"\S", description="the question")
    choices: list[Annotated[str, Field(max_length=MAX_QUESTION_CHARS)]] | None = Field(
        None, min_length=2, max_length=MAX_OPTIONS, description="options of a multiple-choice question"
    )
    until: TimeArgument | None = Field(None, description="query time: only memory recorded by then is used")
    video_id: str | None = Field(
        None, max_length=MAX_ID_BYTES, description="answer from this video only (file name without extension)"
    )


def frame_url(relative: str) -> str:
    """The server's URL of a stored frame: its path relative to the store root (`frames/...`)."""
    return "/" + quote(relative)


def video_url(video_id: str) -> str:
    return "/videos/" + quote(video_id, safe="")


@dataclass
class Reader:
    """One thread's view of the store: its own connection, an agent over it, how times read."""

    store: Store
    agent: Agent
    time: TimeText

    def ask(self, request: AskRequest, on_step: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
        """The answer as `answer()` gives it; `on_step` sees each step as `step()` gives it."""
        answer = self.agent.ask(
            request.question,
            request.choices,
            request.until,
            request.video_id,
            on_step=None if on_step is None else lambda step: on_step(self.step(step)),
        )
        return self.answer(answer)

    def evidence(self, e: dict[str, Any]) -> dict[str, Any]:
        """An evidence object (`Evidence.to_json()`) with its time range as the store reads it
        (`span`) and the URLs of frames to show for it (`frame_urls`)."""
        frames = e["frames"] or frames_between(self.store, e["video_id"], e["t_start"], e["t_end"], THUMBNAILS)
        return {**e, "span": self.time.span(e["t_start"], e["t_end"]), "frame_urls": [frame_url(f) for f in frames]}

    def step(self, step: dict[str, Any]) -> dict[str, Any]:
        """A trace step with its evidence as `evidence()` gives it."""
        if "evidence" not in step:
            return step
        return {**step, "evidence": [self.evidence(e) for e in step["evidence"]]}

    def answer(self, answer: Answer) -> dict[str, Any]:
        """`Answer.to_json()` with every evidence object as `evidence()` gives it."""
        data = answer.to_json()
        return {**data, "evidence": [self.evidence(e) for e in data["evidence"]], "trace": [self.step(s) for s in data["trace"]]}


class Readers:
    """A pool of reader threads over one store directory."""

    def __init__(self, store_dir: Path, models: ModelSet, cfg: AgentConfig, threads: int = 8) -> None:
        with Store(store_dir, read_only=True) as store:  # no store there: one line now, not in every question
            self.frames_dir = store.frames_dir.resolve()
        self.store_dir = store_dir
        self.models = models
        self.cfg = cfg
        self._pool = ThreadPoolExecutor(threads, thread_name_prefix="videomem-reader")
        self._local = threading.local()
        self._generation = 0

    def submit(self, work: Callable[[Reader], T]) -> Future[T]:
        """Run `work` with this thread's reader, on the pool."""
        return self._pool.submit(lambda: work(self._reader()))

    async def run(self, work: Callable[[Reader], T]) -> T:
        return await asyncio.wrap_future(self.submit(work))

    def refresh(self) -> None:
        """The store changed (an ingest ended): every thread reopens before its next work."""
        self._generation += 1

    def close(self) -> None:
        """Wait for the work in flight; each thread's connection closes as its thread ends."""
        self._pool.shutdown(wait=True, cancel_futures=True)

    def _reader(self) -> Reader:
        held: tuple[int, Reader] | None = getattr(self._local, "held", None)
        if held is not None and held[0] == self._generation:
            return held[1]
        if held is not None:
            held[1].store.close()
        generation, store = self._generation, Store(self.store_dir, read_only=True)
        reader = Reader(store, Agent(store, self.models, self.cfg), TimeText(timeline_kind(store)))
        self._local.held = (generation, reader)
        return reader
