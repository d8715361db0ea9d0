"""A video's sound track as 16 kHz mono float32, in fixed-length chunks.

Speech models and the voice-activity detector all read 16 kHz mono, so the track is decoded with
PyAV and resampled as it streams: one chunk (`chunk_seconds`) is in memory at a time, never the
whole track, so a week-long recording costs the memory of a few minutes of audio. Chunk k covers
[k·chunk_seconds, (k+1)·chunk_seconds) in file seconds; samples are counted from the first
decoded frame's timestamp, so a track that starts late keeps its place on the timeline.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import av
import numpy as np

from videomem.errors import VideoError

SAMPLE_RATE = 16_000


@dataclass(frozen=True)
class AudioChunk:
    index: int
    t_start: float
    """File seconds of the first sample."""
    samples: np.ndarray
    """float32 in [-1, 1], mono, SAMPLE_RATE per second."""

    @property
    def t_end(self) -> float:
        return self.t_start + len(self.samples) / SAMPLE_RATE


def has_audio(path: str | Path) -> bool:
    """Whether the file holds an audio stream at all (a silent camera file has none)."""
    try:
        with av.open(str(path)) as container:
            return bool(container.streams.audio)
    except (av.FFmpegError, OSError) as exc:
        raise VideoError(f"{path}: cannot open ({exc})") from None


def audio_chunks(path: str | Path, chunk_seconds: float, skip: set[int] | frozenset[int] = frozenset()) -> Iterator[AudioChunk]:
    """The track's chunks in order, except those whose index is in `skip` (done before: they are
    still decoded, which is cheap next to a speech model, but not handed out)."""
    per_chunk = max(1, round(chunk_seconds * SAMPLE_RATE))
    try:
        with av.open(str(path)) as container:
            stream = container.streams.audio[0]
            resampler = av.AudioResampler(format="flt", layout="mono", rate=SAMPLE_RATE)
            parts: list[np.ndarray] = []
            held = 0
            first: int | None = None
            index = 0
            for frame in container.decode(stream):
                for out in resampler.resample(frame):
                    if first is None:
                        first = round((out.time or 0.0) * SAMPLE_RATE)
                        index, lead = divmod(first, per_chunk)
                        if lead:
                            parts.append(np.zeros(lead, dtype=np.float32))
                            held = lead
                    data = out.to_ndarray().reshape(-1).astype(np.float32, copy=False)
                    parts.append(data)
                    held += len(data)
                    while held >= per_chunk:
                        joined = np.concatenate(parts)
                        if index not in skip:
                            yield AudioChunk(index, index * per_chunk / SAMPLE_RATE, joined[:per_chunk])
                        parts, held, index = [joined[per_chunk:]], held - per_chunk, index + 1
            for out in resampler.resample(None):
                parts.append(out.to_ndarray().reshape(-1).astype(np.float32, copy=False))
            tail = np.concatenate(parts) if parts else np.zeros(0, dtype=np.float32)
            if len(tail) and index not in skip:
                yield AudioChunk(index, index * per_chunk / SAMPLE_RATE, tail)
    except (av.FFmpegError, OSError) as exc:
        raise VideoError(f"{path}: audio cannot be decoded ({' '.join(str(exc).split())})") from None
