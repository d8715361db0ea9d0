"""Video ids, and the store paths built from them.

A video's id is its file name without the extension. The id names the video's folder of frames
(`frames/<id>/`, which `--force` deletes) and starts the keys of its units of work
(`<id>:<clip>`), so an id that could leave that folder or run into another video's keys is
refused where ids are made: every `VideoSource` (the CLI's and the server's ingest, Ray's)
checks its id with `core.check_video_id`. Paths built from ids are checked again with `inside`
before anything is written or deleted.
"""

from __future__ import annotations

from pathlib import Path

from videomem.core import check_video_id
from videomem.errors import StoreError

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
