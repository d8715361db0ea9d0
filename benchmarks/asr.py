"""The transcribe stage's own cost on a 1-hour spoken track, as a real-time factor on one core.

Track: espeak-ng lines with pauses between them, looped to one hour under a tiny 1-fps test
picture (AAC sound, H.264 video), so about half the hour is speech. The sample stage cuts it
into the default 10-s clips first (not timed). Then, pinned to one CPU core, in this process:

* decode: the sound track decoded and resampled to 16 kHz mono in the stage's chunks;
* VAD: the same plus Silero VAD over every chunk;
* stage: the whole `transcribe` stage — decode, resampling, VAD, a fake speech model that
  returns one segment per speech span at no cost, alignment to clips and the per-chunk store
  writes — into the store.

Each line is audio seconds / wall seconds. The speech model is what the fake replaces, so the
last line, `asr overhead: N.Nx real time`, is what the stage adds to any model. Target: at
least 100x real time on one core. (faster-whisper's own throughput needs a GPU and is not
measured here.)
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import imageio_ffmpeg
import numpy as np

from videomem.core import tune_process

tune_process()  # an entry point like `videomem`: OpenMP threads sleep while they wait (set before torch loads)

from videomem.config import PipelineConfig, load_models
from videomem.models.asr import Span, speech_spans
from videomem.models.registry import ModelSet
from videomem.pipeline.runner import ingest
from videomem.store import Store
from videomem.video.audio import audio_chunks
from videomem.video.transcripts import Segment

HOUR = 3600
LINES = [
    "Remember to buy milk and eggs on the way home tonight.",
    "The meeting moved to Thursday at half past two in room four.",
    "Could you pass me the screwdriver from the blue toolbox please?",
]
PAUSE_S = 4.0


class FreeRecognizer:
    """A speech model that costs nothing: one segment per speech span."""

    def transcribe(self, audio: np.ndarray, spans: Sequence[Span]) -> list[Segment]:
        return [Segment(a, b, "words") for a, b in spans]


def make_track(root: Path) -> Path:
    ffmpeg = imageio_ffmpeg.get_ffmpeg_exe()
    parts = []
    for i, line in enumerate(LINES):
        wav = root / f"line{i}.wav"
        subprocess.run(["espeak-ng", "-w", str(wav), line], check=True)
        parts += ["-i", str(wav)]
    pads = "".join(f"[{i}]apad=pad_dur={PAUSE_S},aresample=16000[p{i}];" for i in range(len(LINES)))
    joined = "".join(f"[p{i}]" for i in range(len(LINES)))
    loop = root / "loop.wav"
    subprocess.run(
        [ffmpeg, "-hide_banner", "-loglevel", "error", "-y", *parts,
         "-filter_complex", f"{pads}{joined}concat=n={len(LINES)}:v=0:a=1", str(loop)],
        check=True,
    )  # fmt: skip
    video = root / "hour.mp4"
    subprocess.run(
        [ffmpeg, "-hide_banner", "-loglevel", "error", "-y",
         "-f", "lavfi", "-i", f"testsrc=size=32x32:rate=1:duration={HOUR}",
         "-stream_loop", "-1", "-i", str(loop), "-map", "0:v", "-map", "1:a",
         "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "64k",
         "-t", str(HOUR), str(video)],
        check=True,
    )  # fmt: skip
    return video


def rate(seconds: float, wall: float) -> str:
    return f"{seconds / wall:.1f}x real time ({seconds:.0f} s of audio in {wall:.1f} s)"


def main() -> None:
    if shutil.which("espeak-ng") is None:
        sys.exit("benchmarks/asr.py needs espeak-ng (apt-get install espeak-ng)")
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    pipeline = PipelineConfig(stages=("sample", "transcribe"), frames_per_clip=1)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        video = make_track(root)
        store = Store(root / "store", create=True)
        models = ModelSet(load_models())
        models.__dict__["asr"] = FreeRecognizer()
        ingest([video], store, pipeline, lambda: models, stages=["sample"], show_progress=False)

        started = time.perf_counter()
        audio = sum(len(c.samples) for c in audio_chunks(video, pipeline.transcribe_chunk_seconds)) / 16_000
        print(f"decode + resample: {rate(audio, time.perf_counter() - started)}")

        speech_spans(np.zeros(16_000, dtype=np.float32))  # load the VAD model outside the timings
        started = time.perf_counter()
        spoken = sum(b - a for c in audio_chunks(video, pipeline.transcribe_chunk_seconds) for a, b in speech_spans(c.samples))
        print(f"decode + resample + VAD: {rate(audio, time.perf_counter() - started)}; speech {spoken / audio:.0%} of the track")

        started = time.perf_counter()
        report = ingest([video], store, pipeline, lambda: models, stages=["transcribe"], show_progress=False)
        wall = time.perf_counter() - started
        if not report.ok:
            sys.exit(f"transcribe failed: {report.all_failures()}")
        n = store.query("SELECT COUNT(*) AS n FROM transcripts")[0]["n"]
        print(f"stage (fake model, {n} transcript rows written): {rate(audio, wall)}")
        print(f"asr overhead: {audio / wall:.1f}x real time")


if __name__ == "__main__":
    main()
