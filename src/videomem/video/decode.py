"""Frame sampling: decode the frames a clip needs, never the whole video.

Ingest keeps 2 frames per 10 s. Decoding every frame to keep those (what TeleMem and Deep
Video Discovery do with OpenCV) spends almost all its time on frames that are thrown away. Two
paths avoid that:

* **Windowed requests** (`keyframe_tolerance > 0`): a frame may come from anywhere in
  `[lo, hi]`. PyAV seeks to the keyframe at or before the wanted time and reads packet headers
  up to `hi` without decoding them. If a keyframe lies in the window, that one packet is decoded
  alone. Otherwise the packets from the keyframe on are decoded, skipping frames that no other
  frame references, up to the first frame at or after `lo` — the cheapest frame in the window.
* **Exact requests** (`lo == hi`): the frame on screen at `t` (the last one with a
  presentation time at or before `t`). decord seeks fast; PyAV and OpenCV are fallbacks for
  files decord cannot read.

A request the video has no frame for — a window that falls in a long gap between frames, or
past the end of a truncated file — gets None, never a frame from elsewhere: a frame from after
`hi` would put later content under an earlier clip (and leak it past a query time), one from
before `lo` earlier content under a later clip.

Frame times are presentation timestamps relative to the first frame, so variable-frame-rate
video is sampled by time, not by frame index × fps. Frames are scaled to a maximum side and
turned upright (display matrix), so a phone video comes out the way it was filmed.
"""

from __future__ import annotations

import bisect
import functools
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

import av
import cv2
from av.video.reformatter import VideoReformatter
import numpy as np

from videomem.errors import VideoError
from videomem.video.probe import VideoInfo

_EPS = 1e-6
_NONREF_MIN_WINDOW = 0.5
"""Skip unreferenced frames only when the window is wide enough to hold a referenced one."""
_SEEK_AHEAD = 5.0
"""Exact mode without a keyframe index: seek instead of decoding on when the next frame is this far ahead."""


@dataclass(frozen=True)
class FrameRequest:
    """A wanted frame time `t` (file seconds) and the window `[lo, hi]` a frame may come from."""

    t: float
    lo: float
    hi: float

    @classmethod
    def at(cls, t: float) -> FrameRequest:
        return cls(t, t, t)

    @property
    def is_exact(self) -> bool:
        return self.hi - self.lo < _EPS


@dataclass(frozen=True)
class Frame:
    t: float
    """File time of the frame actually decoded (presentation time; the first frame is 0)."""
    image: np.ndarray
    """RGB uint8, upright, longest side at most the sampler's max_side."""
    keyframe: bool
    """Decoded from a keyframe alone, with no other frame decoded for it."""


def output_size(info: VideoInfo, max_side: int | None) -> tuple[int, int]:
    """(width, height) each decoded frame is scaled to, before it is turned upright."""
    width, height = info.coded_width * info.pixel_aspect, info.coded_height
    scale = min(1.0, max_side / max(width, height)) if max_side else 1.0
    return max(1, round(width * scale)), max(1, round(height * scale))


def _upright(image: np.ndarray, rotation: int) -> np.ndarray:
    return np.ascontiguousarray(np.rot90(image, rotation // 90)) if rotation else image


class _Backend(Protocol):
    name: str

    def read(self, requests: Sequence[FrameRequest]) -> list[Frame | None]: ...

    def close(self) -> None: ...


class _PyAVReader:
    """Seeks per request; decodes a keyframe alone when one is in the window."""

    name = "pyav"

    def __init__(self, info: VideoInfo, size: tuple[int, int]) -> None:
        self._info = info
        self._size = size
        self._container = av.open(info.path)
        self._stream = self._container.streams.video[0]
        # Frame threading delays output by a frame per thread and must refill after every
        # seek; for short decodes it costs more CPU than it saves. `--workers` parallelises.
        self._stream.thread_type = "SLICE"
        self._codec = self._stream.codec_context
        self._reformatter = VideoReformatter()
        self._tb = float(self._stream.time_base)
        entries = self._stream.index_entries
        self._keys = sorted(self._time(e.timestamp) for e in entries if e.is_keyframe) if entries else []
        self._frames: Iterator[av.VideoFrame] | None = None
        self._prev: av.VideoFrame | None = None
        self._ahead: av.VideoFrame | None = None

    def _time(self, pts: int) -> float:
        return pts * self._tb - self._info.start_time

    def _seek(self, t: float) -> None:
        """To the last keyframe at or before t; the decoder starts clean."""
        target = math.floor((max(t, 0.0) + self._info.start_time) / self._tb)
        self._container.seek(target, backward=True, stream=self._stream)
        self._codec.flush_buffers()
        self._frames = self._prev = self._ahead = None

    def _to_frame(self, frame: av.VideoFrame, keyframe: bool) -> Frame:
        width, height = self._size
        image = self._reformatter.reformat(frame, width, height, "rgb24", interpolation="AREA").to_ndarray()
        return Frame(self._time(frame.pts), _upright(image, self._info.rotation), keyframe)

    def read(self, requests: Sequence[FrameRequest]) -> list[Frame | None]:
        return [self._exact(r) if r.is_exact else self._windowed(r) for r in requests]

    def _windowed(self, req: FrameRequest) -> Frame | None:
        self._seek(req.t)
        packets: list[av.Packet] = []
        for packet in self._container.demux(self._stream):
            if packet.pts is None and packet.dts is None:
                continue
            if packet.dts is not None and self._time(packet.dts) > req.hi:
                break
            packets.append(packet)
        keys = [p for p in packets if p.is_keyframe and p.pts is not None and req.lo <= self._time(p.pts) <= req.hi]
        if keys:
            best = min(keys, key=lambda p: abs(self._time(p.pts) - req.t))
            decoded = self._codec.decode(best) + self._codec.decode(None)
            self._codec.flush_buffers()
            if decoded:
                return self._to_frame(decoded[0], keyframe=True)
        if req.hi - req.lo >= _NONREF_MIN_WINDOW:
            found = self._decode_into_window(packets, req, "NONREF")
            if found is not None:
                return found
        # Every frame, when skipping unreferenced ones found none (or the window is narrow).
        return self._decode_into_window(packets, req, "DEFAULT")

    def _decode_into_window(self, packets: list[av.Packet], req: FrameRequest, skip: str) -> Frame | None:
        """Decode from the keyframe on to the first frame in [lo, hi]; None when the frames jump
        past the window, or end, without one in it."""
        self._codec.skip_frame = skip
        try:
            for packet in [*packets, None]:
                for frame in self._codec.decode(packet):
                    if frame.pts is None:
                        continue
                    t = self._time(frame.pts)
                    if t > req.hi + _EPS:
                        return None
                    if t >= req.lo - _EPS:
                        return self._to_frame(frame, keyframe=False)
        finally:
            self._codec.skip_frame = "DEFAULT"
            self._codec.flush_buffers()
        return None

    def _decoded(self) -> Iterator[av.VideoFrame]:
        for packet in self._container.demux(self._stream):
            for frame in self._codec.decode(packet):
                if frame.pts is not None:
                    yield frame

    def _must_seek(self, t: float) -> bool:
        """Decode on from where we are, unless t is behind us or a keyframe lies between."""
        if self._frames is None:
            return True
        pulled = [f for f in (self._prev, self._ahead) if f is not None]
        if not pulled or t < self._time(pulled[0].pts) - _EPS:
            return True
        position = self._time(pulled[-1].pts)
        if self._keys:
            i = bisect.bisect_right(self._keys, t) - 1
            return i >= 0 and self._keys[i] > position + _EPS
        return t - position > _SEEK_AHEAD

    def _exact(self, req: FrameRequest) -> Frame | None:
        """The frame on screen at t: the last one whose time is at or before t (None when the
        first frame this seek finds comes later)."""
        if self._must_seek(req.t):
            self._seek(req.t)
            self._frames = self._decoded()
            self._ahead = next(self._frames, None)
        assert self._frames is not None
        while self._ahead is not None and self._time(self._ahead.pts) <= req.t + _EPS:
            self._prev = self._ahead
            self._ahead = next(self._frames, None)
        if self._prev is None:
            if self._ahead is None:
                raise VideoError(f"{self._info.path}: no frame decodes near {req.t:.2f}s")
            return None
        return self._to_frame(self._prev, keyframe=False)

    def close(self) -> None:
        self._container.close()


class _DecordReader:
    """decord keeps a frame index and seeks to exact frames quickly; exact requests only.

    decord applies the display matrix itself, so its output size is given upright."""

    name = "decord"

    def __init__(self, info: VideoInfo, size: tuple[int, int]) -> None:
        import decord

        width, height = size[::-1] if info.rotation in (90, 270) else size
        self._reader = decord.VideoReader(info.path, ctx=decord.cpu(0), width=width, height=height)
        starts = self._reader.get_frame_timestamp(range(len(self._reader)))[:, 0].astype(float)
        self._times = (starts - starts[0]).tolist()

    def read(self, requests: Sequence[FrameRequest]) -> list[Frame | None]:
        indices = [max(0, bisect.bisect_right(self._times, r.t + _EPS) - 1) for r in requests]
        batch = self._reader.get_batch(indices).asnumpy()
        return [Frame(self._times[i], image, keyframe=False) for i, image in zip(indices, batch)]

    def close(self) -> None:
        del self._reader


class _OpenCVReader:
    """Last resort: OpenCV's own FFmpeg build; its seeks assume a constant frame rate."""

    name = "opencv"

    def __init__(self, info: VideoInfo, size: tuple[int, int]) -> None:
        self._info = info
        self._size = size
        self._cap = cv2.VideoCapture(info.path, cv2.CAP_FFMPEG)
        if not self._cap.isOpened():
            raise VideoError(f"{info.path}: OpenCV cannot open it")
        self._cap.set(cv2.CAP_PROP_ORIENTATION_AUTO, 0)

    def read(self, requests: Sequence[FrameRequest]) -> list[Frame | None]:
        frames: list[Frame | None] = []
        for req in requests:
            index = min(self._info.n_frames - 1, int(math.floor(req.t * self._info.fps + _EPS)))
            self._cap.set(cv2.CAP_PROP_POS_FRAMES, index)
            ok, bgr = self._cap.read()
            if not ok:
                raise VideoError(f"{self._info.path}: OpenCV read no frame at {req.t:.2f}s")
            rgb = cv2.cvtColor(cv2.resize(bgr, self._size, interpolation=cv2.INTER_AREA), cv2.COLOR_BGR2RGB)
            frames.append(Frame(index / self._info.fps, _upright(rgb, self._info.rotation), keyframe=False))
        return frames

    def close(self) -> None:
        self._cap.release()


def _answers(req: FrameRequest, frame: Frame) -> bool:
    """A frame from inside the window (an exact request: on screen by `t`, so never later)."""
    return frame.t <= req.hi + _EPS and (req.is_exact or frame.t >= req.lo - _EPS)


_BACKENDS = {"pyav": _PyAVReader, "decord": _DecordReader, "opencv": _OpenCVReader}
EXACT_ORDER = ("decord", "pyav", "opencv")
WINDOWED_ORDER = ("pyav", "decord", "opencv")


@functools.cache
def _decode_errors() -> tuple[type[BaseException], ...]:
    """What a backend raises when it cannot handle a file (decord's are known only once imported)."""
    errors: list[type[BaseException]] = [av.error.FFmpegError, cv2.error, VideoError, ImportError]
    try:
        from decord._ffi.base import DECORDError

        errors += [DECORDError, RuntimeError]
    except ImportError:
        pass
    return tuple(errors)


class FrameSampler:
    """Frames of one video. Keeps backends open between calls; give requests in time order.

    A backend that fails on this file is closed and the next one in the order is tried; only
    when all fail does `read` raise a VideoError naming the file and each backend's reason.
    """

    def __init__(self, info: VideoInfo, *, max_side: int | None = None, backends: Sequence[str] | None = None) -> None:
        unknown = [b for b in backends or () if b not in _BACKENDS]
        if unknown:
            raise ValueError(f"unknown decode backend {unknown[0]!r}; known: {', '.join(_BACKENDS)}")
        self.info = info
        self._size = output_size(info, max_side)
        self._order = tuple(backends) if backends else None
        self._open: dict[str, _Backend] = {}
        self._failed: dict[str, str] = {}
        self.used: str | None = None
        """The backend that served the last read."""

    def read(self, requests: Sequence[FrameRequest]) -> list[Frame | None]:
        """One entry per request: its frame, or None when the video has none for it (nothing
        in the window; for an exact request, nothing on screen yet or a frame after `t`)."""
        if not requests:
            return []
        exact = all(r.is_exact for r in requests)
        order = self._order or (EXACT_ORDER if exact else WINDOWED_ORDER)
        for name in order:
            if name in self._failed:
                continue
            try:
                backend = self._open.get(name)
                if backend is None:
                    backend = self._open[name] = _BACKENDS[name](self.info, self._size)
                frames = backend.read(requests)
            except _decode_errors() as exc:
                self._failed[name] = " ".join(str(exc).split()) or type(exc).__name__
                self._close(name)
                continue
            self.used = name
            return [f if f is not None and _answers(r, f) else None for r, f in zip(requests, frames)]
        reasons = "; ".join(f"{n}: {why}" for n, why in self._failed.items())
        raise VideoError(f"{self.info.path}: cannot decode frames near {requests[0].t:.1f}s ({reasons})")

    def _close(self, name: str) -> None:
        backend = self._open.pop(name, None)
        if backend is not None:
            try:
                backend.close()
            except _decode_errors():
                pass

    def close(self) -> None:
        for name in list(self._open):
            self._close(name)

    def __enter__(self) -> FrameSampler:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

