"""Reading stored frames back: what a vision task sees of a clip (`ClipView`).

Frame JPEGs are files under the store root (paths in the `frames` table are relative to it).
`ClipSources` is read from SQLite in the thread that owns the store; loading its files can run
ahead in another thread, and `ClipBytes` carries them, undecoded, to a worker on another machine.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from PIL import Image

from videomem.core import ClipView
from videomem.errors import StoreError
from videomem.evidence import Speech
from videomem.store.clips import ClipRow, speech_of
from videomem.video.transcripts import transcript_text
from videomem.store.db import Store


def _unreadable(path: Path, exc: Exception) -> StoreError:
    return StoreError(f"{path}: frame cannot be read ({exc}); re-run `videomem ingest` on its video to restore it")


def frame_bytes(root: Path, relative: str) -> bytes:
    """A stored frame's JPEG file as it is, to send to a worker that has no access to the store."""
    try:
        return (root / relative).read_bytes()
    except OSError as exc:
        raise _unreadable(root / relative, exc) from None


def decode_frame(data: bytes, path: Path) -> Image.Image:
    """A stored frame's bytes as an RGB image (`path`: where they were read, for the error)."""
    try:
        with Image.open(io.BytesIO(data)) as image:
            return image.convert("RGB")
    except (OSError, ValueError) as exc:
        raise _unreadable(path, exc) from None


def open_frame(root: Path, relative: str) -> Image.Image:
    """A frame of the store at `root` (paths in the `frames` table are relative to it)."""
    return decode_frame(frame_bytes(root, relative), root / relative)


@dataclass(frozen=True)
class ClipSources:
    """Where a clip's view comes from: its frame files and times, and its transcript. Read from
    SQLite in the thread that owns the store; `load` only reads files, so it can run ahead in
    another thread."""

    clip: ClipRow
    root: Path
    frame_paths: tuple[str, ...]
    frame_times: tuple[float, ...]
    transcript: str
    speech: tuple[Speech, ...] = ()

    @property
    def empty(self) -> bool:
        """Nothing to look at or read (a gap in the video)."""
        return not self.frame_paths and not self.transcript

    def load(self) -> ClipView:
        return self.read().view()

    def read(self) -> ClipBytes:
        """The clip with its frame files read but not decoded: what travels to a remote worker."""
        jpegs = tuple(frame_bytes(self.root, p) for p in self.frame_paths)
        return ClipBytes(self.clip, self.root, self.frame_paths, self.frame_times, jpegs, self.transcript, self.speech)


@dataclass(frozen=True)
class ClipBytes:
    """A clip's frames as their stored JPEG bytes, with their times and its transcript;
    picklable, so a worker on another machine builds the `ClipView` (`view`)."""

    clip: ClipRow
    root: Path
    frame_paths: tuple[str, ...]
    frame_times: tuple[float, ...]
    jpegs: tuple[bytes, ...]
    transcript: str
    speech: tuple[Speech, ...] = ()

    def view(self) -> ClipView:
        return ClipView(
            video_id=self.clip.video_id,
            t_start=self.clip.t_start,
            t_end=self.clip.t_end,
            frames=[decode_frame(data, self.root / p) for data, p in zip(self.jpegs, self.frame_paths)],
            frame_times=list(self.frame_times),
            transcript=self.transcript,
            speech=self.speech,
        )


def clip_sources(store: Store, clip: ClipRow) -> ClipSources:
    frames = store.query("SELECT t, path FROM frames WHERE clip_id = ? ORDER BY t", (clip.id,))
    speech = speech_of(store, [clip.id])
    return ClipSources(
        clip, store.root, tuple(f["path"] for f in frames), tuple(f["t"] for f in frames), transcript_text(speech), speech
    )


def frames_view(store: Store, frames: Sequence, t_start: float, t_end: float) -> ClipView:
    """What a vision task sees of some stored frames (rows with `t`, `path`, `video_id`,
    `clip_id`, of one video or of videos in sequence): the images, their times and the words
    spoken in their clips, as a view of [t_start, t_end]."""
    speech = speech_of(store, sorted({f["clip_id"] for f in frames}))
    return ClipView(
        video_id=frames[0]["video_id"],
        t_start=t_start,
        t_end=t_end,
        frames=[open_frame(store.root, f["path"]) for f in frames],
        frame_times=[f["t"] for f in frames],
        transcript=transcript_text(speech),
        speech=speech,
    )
