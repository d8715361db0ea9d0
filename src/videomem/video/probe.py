"""Probe a video file: what it holds and whether it can be decoded at all.

Probing runs before any frame is sampled so that a bad file (missing, empty, not a video, cut
short, audio only, no frames) fails at once with one line naming the file and the problem,
instead of part-way through a batch with a decoder traceback.

File time 0 is the presentation time of the first video frame; every backend in `decode`
reports frame times on that origin, whatever the container's own start time is.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass
from pathlib import Path

import av

from videomem.errors import VideoError

_MP4_BOXES = (b"ftyp", b"moov", b"mdat", b"free", b"wide", b"skip")
HASH_SPAN = 1 << 20
"""Bytes read from each end of a file for its content hash."""


@dataclass(frozen=True)
class VideoInfo:
    """What sampling needs to know about one video file.

    `width`/`height` are the upright display size (rotation and pixel aspect applied);
    `coded_width`/`coded_height` are what the decoder outputs. `rotation` is the display
    matrix's counter-clockwise turn in degrees (0, 90, 180 or 270) that makes a frame upright.
    """

    path: str
    duration: float
    fps: float
    n_frames: int
    width: int
    height: int
    coded_width: int
    coded_height: int
    rotation: int
    pixel_aspect: float
    start_time: float
    codec: str
    container: str
    has_audio: bool

    def to_json(self) -> dict:
        return asdict(self)


def content_hash(path: str | Path) -> str:
    """SHA-256 of a file's size, first MiB and last MiB: tells two different videos apart (their
    headers, index and compressed data differ) without reading hours of footage."""
    path = Path(path)
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        size = fh.seek(0, 2)
        digest.update(str(size).encode())
        fh.seek(0)
        digest.update(fh.read(HASH_SPAN))
        fh.seek(max(size - HASH_SPAN, 0))
        digest.update(fh.read(HASH_SPAN))
    return digest.hexdigest()


def _looks_like_mp4(path: Path) -> bool:
    with path.open("rb") as fh:
        head = fh.read(12)
    return len(head) >= 8 and head[4:8] in _MP4_BOXES


def _reason(exc: Exception) -> str:
    """FFmpeg's message without the path PyAV appends (the caller names the file once)."""
    text = getattr(exc, "strerror", None) or str(exc)
    return str(text).split(": '")[0].strip()


def _rotation(stream: av.video.stream.VideoStream, first: av.VideoFrame) -> int:
    """Counter-clockwise degrees from the display matrix (modern files) or a `rotate` tag (old ones)."""
    degrees = first.rotation
    if not degrees:
        tag = stream.metadata.get("rotate")
        try:
            # The legacy tag is clockwise; the display matrix is counter-clockwise.
            degrees = -int(float(tag)) if tag else 0
        except ValueError:
            degrees = 0
    return int(round(degrees / 90.0)) * 90 % 360


def _check_not_truncated(path: Path, stream: av.video.stream.VideoStream, size: int) -> None:
    """A file cut short after its index (an MP4 written with faststart) still opens; its index
    then points past the end of the file."""
    end = max((e.pos + e.size for e in stream.index_entries if e.pos >= 0), default=0)
    if end > size:
        raise VideoError(f"{path}: truncated: its index needs {end} bytes but the file has {size}")


def _first_frame(path: Path, container: av.container.InputContainer, stream) -> av.VideoFrame:
    try:
        for frame in container.decode(stream):
            return frame
    except av.error.FFmpegError as exc:
        raise VideoError(f"{path}: video stream cannot be decoded ({_reason(exc)})") from None
    raise VideoError(f"{path}: zero duration: the video stream holds no frames")


def _duration(container: av.container.InputContainer, stream, start_time: float) -> float:
    """Seconds from the first frame to the end of the video stream."""
    if stream.duration:
        end = float(((stream.start_time or 0) + stream.duration) * stream.time_base)
    elif container.duration:
        end = ((container.start_time or 0) + container.duration) / av.time_base
    else:
        # Neither the stream nor the container states a duration (raw streams): read the
        # packet headers to the end. This demuxes but decodes nothing.
        end = start_time
        container.seek(0)
        for packet in container.demux(stream):
            if packet.pts is not None:
                end = max(end, float((packet.pts + (packet.duration or 0)) * stream.time_base))
    return end - start_time


def frames_end(info: VideoInfo) -> float:
    """File time of the last video frame that is actually there, read from packet headers (no
    decoding): where a cut-off file really ends, whatever its header states."""
    end = 0.0
    try:
        with av.open(info.path) as container:
            stream = container.streams.video[0]
            for packet in container.demux(stream):
                if packet.pts is not None:
                    end = max(end, float(packet.pts * stream.time_base) - info.start_time)
    except av.error.FFmpegError:
        pass  # the damage itself: what was read so far is where it ends
    return end


def probe(path: str | Path) -> VideoInfo:
    """Open `path`, decode its first frame, and describe it; any problem is a one-line VideoError."""
    path = Path(path)
    if not path.exists():
        raise VideoError(f"{path}: no such file")
    if not path.is_file():
        raise VideoError(f"{path}: not a file")
    size = path.stat().st_size
    if size == 0:
        raise VideoError(f"{path}: empty file (0 bytes)")
    try:
        container = av.open(str(path))
    except av.error.FFmpegError as exc:
        if _looks_like_mp4(path):
            raise VideoError(f"{path}: truncated or damaged MP4 ({_reason(exc)}; is the moov index missing?)") from None
        raise VideoError(f"{path}: not a video file ffmpeg can read ({_reason(exc)})") from None
    with container:
        if not container.streams.video:
            if container.streams.audio:
                raise VideoError(f"{path}: audio only, no video stream")
            raise VideoError(f"{path}: no video stream")
        stream = container.streams.video[0]
        _check_not_truncated(path, stream, size)
        first = _first_frame(path, container, stream)
        start_time = float(first.pts * stream.time_base) if first.pts is not None else 0.0
        duration = _duration(container, stream, start_time)
        if duration <= 0:
            raise VideoError(f"{path}: zero duration")
        rate = stream.average_rate or stream.guessed_rate
        n_frames = stream.frames or 0
        fps = float(rate) if rate else (n_frames / duration if n_frames else 0.0)
        if fps <= 0:
            raise VideoError(f"{path}: frame rate unknown")
        if not n_frames:
            n_frames = max(1, round(duration * fps))
        sar = stream.sample_aspect_ratio
        pixel_aspect = float(sar) if sar and sar > 0 else 1.0
        rotation = _rotation(stream, first)
        coded_w, coded_h = first.width, first.height
        display_w, display_h = round(coded_w * pixel_aspect), coded_h
        if rotation in (90, 270):
            display_w, display_h = display_h, display_w
        return VideoInfo(
            path=str(path),
            duration=duration,
            fps=fps,
            n_frames=int(n_frames),
            width=display_w,
            height=display_h,
            coded_width=coded_w,
            coded_height=coded_h,
            rotation=rotation,
            pixel_aspect=pixel_aspect,
            start_time=start_time,
            codec=stream.codec_context.name,
            container=container.format.name,
            has_audio=bool(container.streams.audio),
        )
