"""`store.clips.speech_in` on 150,000 transcript lines: the typed speech every evidence item of
episodic and event memory carries, read once per item at answer time.

Two layouts of the same number of lines, written straight into a fresh store as the sample
stage stores them (a line per clip it overlaps): a week of EgoLife-style 30-s files (44 h, one
video per file, about a line a second) and one long video holding every line. For each, the
lines of READS random 30-s evidence ranges are read (one warm-up pass first) with the store's
indexes on (video_id, t_start) and (video_id, line length) and again with them dropped, the
table as it was before (a scan of every line per call).

Printed per layout: ms per call without and with the index. Last line: `speech_in 150000
lines: week N.NNN -> N.NNN ms, one video N.NNN -> N.NNN ms per call (no index -> index)`.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from videomem.core import tune_process

tune_process()  # an entry point like `videomem`: OpenMP threads sleep while they wait (set before torch loads)

from videomem.store import Store
from videomem.store.clips import speech_in

LINES, CLIP, READS = 150_000, 30.0, 300
INDEXES = ("transcripts_time", "transcripts_length")


def fill(store: Store, videos: int) -> list[tuple[str, float]]:
    """LINES lines spread evenly over `videos` videos of 30-s clips; the (video, start) of every clip."""
    per_video = LINES // videos
    seconds = per_video * (CLIP / 28)  # about 28 lines a 30-s clip, as a conversation has
    clips_per_video = int(np.ceil(seconds / CLIP))
    rows, lines, clips = [], [], []
    clip_id = 0
    for v in range(videos):
        vid = f"video{v:05d}"
        rows.append((vid, f"{vid}.mp4", v * seconds, seconds))
        for k in range(clips_per_video):
            clip_id += 1
            clips.append((clip_id, vid, k, k * CLIP, min(seconds, (k + 1) * CLIP)))
        for n in range(per_video):
            start = n * seconds / per_video
            lines.append((1 + v * clips_per_video + int(start // CLIP), vid, start, start + 2.5, "Jake", f"line {n}"))
    with store.transaction() as tx:
        tx.executemany(
            "INSERT INTO videos (id, path, t_offset, duration, fps, n_frames, width, height, rotation, probe_json) "
            "VALUES (?, ?, ?, ?, 20, 1, 64, 48, 0, '{}')",
            rows,
        )
        tx.executemany("INSERT INTO clips (id, video_id, idx, t_start, t_end) VALUES (?, ?, ?, ?, ?)", clips)
        tx.executemany(
            "INSERT INTO transcripts (clip_id, video_id, t_start, t_end, speaker, text) VALUES (?, ?, ?, ?, ?, ?)", lines
        )
    return [(c[1], c[3]) for c in clips]


def per_call(store: Store, ranges: list[tuple[str, float]]) -> float:
    for vid, start in ranges[:20]:
        speech_in(store, vid, start, start + CLIP)
    began = time.perf_counter()
    found = sum(len(speech_in(store, vid, start, start + CLIP)) for vid, start in ranges)
    assert found > 0
    return (time.perf_counter() - began) / len(ranges) * 1000


def layout(videos: int) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "s", create=True)
        clips = fill(store, videos)
        rng = np.random.default_rng(0)
        ranges = [clips[i] for i in rng.integers(0, len(clips), READS)]
        indexed = bool(store.query("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?", (INDEXES[0],)))
        with_index = per_call(store, ranges) if indexed else float("nan")
        for name in INDEXES:
            store.conn.execute(f"DROP INDEX IF EXISTS {name}")
        without = per_call(store, ranges)
        store.close()
    return without, with_index


def main() -> None:
    week = layout(5280)  # 44 h of 30-s files
    one = layout(1)
    print(f"week of 30-s files: {week[0]:.3f} ms per call without the index, {week[1]:.3f} ms with it")
    print(f"one video:          {one[0]:.3f} ms per call without the index, {one[1]:.3f} ms with it")
    print(f"speech_in {LINES} lines: week {week[0]:.3f} -> {week[1]:.3f} ms, one video {one[0]:.3f} -> {one[1]:.3f} ms "
          "per call (no index -> index)")


if __name__ == "__main__":
    sys.exit(main())
