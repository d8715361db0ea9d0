"""What every layer of videomem shares, so no layer has to import another to name it.

This module imports nothing else from the package but its errors (the layers contract in
pyproject.toml holds it just above them): what a video id may be (`check_video_id`), the input
a pipeline reads (`VideoSource`), what a build reports (`StageResult`), what a vision task sees
of a clip (`ClipView`), how work shows its progress (`ProgressFactory`), the multiple-choice
alphabet, the names of the memories and vectors as unit rows (`unit_rows`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal, get_args

import numpy as np
from tqdm import tqdm

from videomem.errors import VideoIdError
from videomem.evidence import Speech

if TYPE_CHECKING:
    from PIL.Image import Image

OptionLetter = Literal["A", "B", "C", "D", "E", "F", "G", "H"]
"""The letter of a multiple-choice option, as a structured answer names it."""

LETTERS = "".join(get_args(OptionLetter))
"""Option letters in order: 'A' is the first option. A multiple-choice question has 2 to
`MAX_OPTIONS` options (datasets use at most eight); every loader, model task and reply reader
uses this one alphabet."""

MAX_OPTIONS = len(LETTERS)

MEMORY_NAMES: tuple[str, ...] = ("events", "objects", "episodic", "semantic", "timeline", "visual")
"""The registered memories, in the order `info`, `search --help` and the agent's tools list
them; memory/registry.py holds one entry per name. Agent profiles accept a `memory.<name>`
tool for each name here (read when a profile is validated), so a memory registered at run
time adds its name here as it adds its entry to `memory.registry.MEMORIES`."""


def tune_process() -> None:
    """Process-wide settings for torch's CPU kernels, unless the user chose otherwise. The entry
    points (`videomem`, `python -m videomem.demo`) call it before torch loads; a library user's
    process is left as it is.

    OpenMP threads wait by sleeping, not spinning: a spinning worker holds a core while it
    waits, and on a machine whose cores are busy each parallel region then waits for workers
    the kernel has descheduled (MiniLM embedding one query took 716 ms instead of 48 ms at load
    5 on two cores, `benchmarks/omp_wait.py`). oneDNN keeps no compiled-primitive cache: text
    batches come in many shapes, and its cache of up to 1,024 primitives grew with the texts
    embedded (+630 MB peak RSS over 3,840 captions on CPU at the same speed; docs/scale.md).
    """
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    os.environ.setdefault("ONEDNN_PRIMITIVE_CACHE_CAPACITY", "0")


def unit_rows(vectors: np.ndarray) -> np.ndarray:
    """`vectors` as float32 rows of unit length (a zero row stays zero), so that their inner
    products are cosines whatever the embedder returned."""
    rows = np.asarray(vectors, dtype=np.float32)
    return rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)


ProgressFactory = Callable[..., tqdm]
"""Makes a progress bar: `(total, desc, unit=...) -> tqdm`-like object."""


def terminal_progress(show: bool = True) -> ProgressFactory:
    """Progress bars on the terminal (hidden when `show` is false)."""

    def bar(total: int, desc: str, unit: str = "clip") -> tqdm:
        return tqdm(total=total, desc=desc, unit=unit, disable=not show, dynamic_ncols=True, leave=True)

    return bar


MAX_ID_BYTES = 200
"""Longest id in UTF-8 bytes: a folder name (at most 255 bytes on common file systems) with room
for the frame files' names."""
FORBIDDEN = "/\\:"
"""Path separators (of any system the store may be copied to), and ':' which ends the id in a
unit key."""


def id_problem(video_id: str) -> str | None:
    """Why `video_id` cannot be a video id; None when it can."""
    if video_id in ("", ".", ".."):
        return "an empty name, '.' or '..' names a folder, not a video"
    bad = next((c for c in video_id if c in FORBIDDEN), None)
    if bad is not None:
        return f"it holds {bad!r} (no path separators or ':')"
    if not video_id.isprintable():
        return "it holds a control or unprintable character"
    if len(video_id.encode("utf-8", "surrogateescape")) > MAX_ID_BYTES:
        return f"it is longer than {MAX_ID_BYTES} bytes"
    return None


def check_video_id(video_id: str) -> str:
    """`video_id` if it can name a video; VideoIdError (one line) if not."""
    problem = id_problem(video_id)
    if problem is not None:
        raise VideoIdError(f"{video_id!r} cannot be a video id (a file name without extension): {problem}")
    return video_id


@dataclass(frozen=True)
class VideoSource:
    """One input video file and where it sits on the corpus timeline."""

    path: Path
    video_id: str
    t_offset: float = 0.0
    transcript: Path | None = None

    def __post_init__(self) -> None:
        check_video_id(self.video_id)  # the id names a folder of the store: never `..` or `a/b`


@dataclass
class StageResult:
    stage: str
    done: int = 0
    skipped: int = 0
    failures: list[tuple[str, str]] = field(default_factory=list)
    """(what failed — a file or unit —, one-line reason)."""
    repaired: int = 0
    """Derived files restored for work already done (frames deleted from the store)."""
    note: str = ""
    """What the stage did not do and why, for the summary (a stage skipped with no video files)."""
    seconds: float = 0.0
    """Wall time of the stage's run (0 for stages streamed into each other)."""


@dataclass
class ClipView:
    """What a vision task sees of one clip: its sampled frames and the words spoken in it."""

    video_id: str
    t_start: float
    t_end: float
    frames: list[Image]
    frame_times: list[float]
    transcript: str = ""
    speech: tuple[Speech, ...] = ()
    """The same lines typed: a vision task takes who spoke and heard-only speech from here, not
    from the transcript's text. Empty for a view built from text alone."""
