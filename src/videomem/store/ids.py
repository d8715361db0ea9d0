"""Video ids, and the store paths built from them.

A video's id is its file name without the extension. The id names the video's folder of frames
(`frames/<id>/`, which `--force` deletes) and starts the keys of its units of work
(`<id>:<clip>`), so an id that could leave that folder or run into another video's keys is
refused where ids are made: every `VideoSource` (the CLI's and the server's ingest, Ray's)
checks its id with `check_video_id`. Paths built from ids are checked again with `inside`
before anything is written or deleted.
"""

from __future__ import annotations

from pathlib import Path

from videomem.errors import StoreError, VideoIdError

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


def video_id_of(path: Path) -> str:
    """The id of the video file `path`: its name without the extension, checked."""
    return check_video_id(path.stem)


def inside(folder: Path, path: Path) -> Path:
    """`path`, once it is certain to lie strictly inside `folder` after every `..` and symlink
    is resolved; StoreError if not (nothing may be written or deleted there)."""
    try:
        resolved, base = path.resolve(), folder.resolve()
    except (OSError, RuntimeError, ValueError):  # a symlink loop, a NUL byte
        resolved = base = None
    if resolved is None or resolved == base or not resolved.is_relative_to(base):
        raise StoreError(f"{path} is not inside {folder}: refused")
    return path
