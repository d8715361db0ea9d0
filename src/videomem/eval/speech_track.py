"""The spoken track of `videomem synth --speech`: espeak-ng lines mixed into one WAV per video.

Debian's `espeak-ng` speaks each line (deterministic: the same text and voice give the same
samples), and each video gets a sound track as long as its footage, silent except where its
lines are placed, so the synth knows to the sample when each word is said. The track is muxed
into the video as AAC by the same ffmpeg call that encodes the frames (`synth._encode`).
"""

from __future__ import annotations

import io
import shutil
import subprocess
import wave
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from videomem.errors import VideomemError

SAMPLE_RATE = 22_050
"""espeak-ng's own output rate; the transcribe stage resamples to 16 kHz as for any video."""
VOICES = ("en-us", "en-us+f3", "en-gb+m3", "en-us+f2")
WORDS_PER_MINUTE = 150


@dataclass(frozen=True)
class SpokenLine:
    t_start: float
    """Corpus seconds: where the voice starts (espeak-ng's own lead-in silence included)."""
    t_end: float
    text: str
    """Exactly the words spoken: what a perfect transcript of the line reads."""
    kind: str
    """item, name or number."""
    voice: str
    video_id: str


def require_espeak() -> str:
    """The espeak-ng executable, or a one-line error saying how to get it."""
    found = shutil.which("espeak-ng")
    if found is None:
        raise VideomemError("--speech needs espeak-ng, which is not installed (apt-get install espeak-ng)")
    return found


def speak(text: str, voice: str) -> np.ndarray:
    """`text` spoken by espeak-ng in `voice`: int16 mono samples at SAMPLE_RATE."""
    command = [require_espeak(), "-v", voice, "-s", str(WORDS_PER_MINUTE), "--stdout", text]
    done = subprocess.run(command, capture_output=True, check=False)
    if done.returncode != 0 or not done.stdout:
        problem = " ".join(done.stderr.decode(errors="replace").split()) or f"exit status {done.returncode}"
        raise VideomemError(f"espeak-ng could not speak {text!r} in voice {voice!r} ({problem})")
    with wave.open(io.BytesIO(done.stdout)) as reader:
        if (reader.getframerate(), reader.getnchannels(), reader.getsampwidth()) != (SAMPLE_RATE, 1, 2):
            raise VideomemError(f"espeak-ng wrote audio in an unexpected format (voice {voice!r})")
        # Written to a pipe, the header cannot hold the length: read to the end.
        return np.frombuffer(reader.readframes(2**31 - 1), dtype="<i2")


def write_track(path: Path, seconds: float, placed: Sequence[tuple[float, np.ndarray]]) -> None:
    """A 16-bit mono WAV of `seconds` of silence with each (file seconds, samples) line added."""
    track = np.zeros(int(round(seconds * SAMPLE_RATE)), dtype=np.int32)
    for at, samples in placed:
        start = int(round(at * SAMPLE_RATE))
        if start < 0 or start + len(samples) > len(track):
            raise AssertionError(f"script bug: a line at {at:.2f} s does not fit a {seconds:g}-s track")
        track[start : start + len(samples)] += samples
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(SAMPLE_RATE)
        out.writeframes(np.clip(track, -32768, 32767).astype("<i2").tobytes())
