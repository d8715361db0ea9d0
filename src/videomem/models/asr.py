"""The `asr` role: voice-activity detection and the speech models behind the transcribe stage.

* `speech_spans` — Silero VAD, the ONNX model that ships inside the `faster-whisper` wheel, run
  on CPU with no download. Every profile has it, the offline one included.
* `SpeechRecognizer` backends, built from `models/*.yaml`'s `asr` role:
  `faster_whisper` (CTranslate2, a size name or a converted model's path; word timestamps
  tighten each segment to its words; the batched pipeline when a GPU is used, or wherever
  `options.batched` is true; `options.transcribe` is passed to its `transcribe`, e.g.
  `{beam_size: 5}` or `{temperature: 0}`), `transformers`
  (a Whisper checkpoint through the automatic-speech-recognition pipeline, with timestamps) and
  `openai` (an OpenAI-compatible `/audio/transcriptions`, e.g. a served Whisper).

A recognizer gets one chunk of 16 kHz mono audio and the VAD's speech spans in it, and returns
segments in chunk seconds; only the spans are decoded, so silence costs nothing. A segment whose
model gave no end time ends where its speech span ends.
"""

from __future__ import annotations

import io
import re
import time
import wave
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from videomem.config import RoleConfig
from videomem.errors import ModelError
from videomem.models.usage import Usage, UsageMeter
from videomem.video.audio import SAMPLE_RATE
from videomem.video.transcripts import Segment

Span = tuple[float, float]
"""Seconds from the start of a chunk."""

ROLE = "asr"
MAX_NEW_TOKENS = 440
"""Most tokens decoded per 30-s window (`max_tokens` caps it lower): Whisper's decoder holds 448
positions, a few of them for the prompt."""
MAX_SPAN_S = 30.0
"""Longest speech span handed to a model: Whisper's window, so no backend has to chunk."""


def speech_spans(audio: np.ndarray, min_silence_s: float = 0.5, pad_s: float = 0.2) -> list[Span]:
    """Where someone speaks in `audio` (16 kHz mono), by Silero VAD; a long stretch of speech is
    cut at a pause into spans of at most MAX_SPAN_S."""
    from faster_whisper.vad import VadOptions, get_speech_timestamps

    if len(audio) == 0:
        return []
    options = VadOptions(
        min_silence_duration_ms=round(min_silence_s * 1000),
        speech_pad_ms=round(pad_s * 1000),
        max_speech_duration_s=MAX_SPAN_S,
    )
    found = get_speech_timestamps(audio, options, sampling_rate=SAMPLE_RATE)
    return [(s["start"] / SAMPLE_RATE, s["end"] / SAMPLE_RATE) for s in found]


class SpeechRecognizer(Protocol):
    def transcribe(self, audio: np.ndarray, spans: Sequence[Span]) -> list[Segment]:
        """Segments of speech in `audio` (chunk seconds), decoding only the `spans`."""
        ...


def build_recognizer(cfg: RoleConfig, meter: UsageMeter) -> SpeechRecognizer:
    if cfg.backend == "faster_whisper":
        return FasterWhisperRecognizer(cfg, meter)
    if cfg.backend == "transformers":
        return TransformersRecognizer(cfg, meter)
    if cfg.backend == "openai":
        return OpenAIRecognizer(cfg, meter)
    raise ModelError(f"asr: backend {cfg.backend!r} cannot transcribe speech")


def _segment(start: float | None, end: float | None, text: str, span: Span) -> Segment | None:
    """A model's segment clamped to its speech span; None when it holds no words."""
    text = " ".join(text.split())
    if not text:
        return None
    lo, hi = span
    t0 = lo if start is None else min(max(start, lo), hi)
    t1 = hi if end is None else min(max(end, t0), hi)
    return Segment(float(t0), float(t1), text)


def _metered(meter: UsageMeter, started: float, calls: int) -> None:
    meter.add(ROLE, Usage(seconds=time.perf_counter() - started, calls=calls))


MISSING_LIBRARY = re.compile(r"Library (\S+) is not found or cannot be loaded")
"""CTranslate2's error when a CUDA library it was built against is absent (it loads them lazily,
at the first GPU call): its 4.x wheels want CUDA 12's libcublas.so.12 and cuDNN 9, while the torch
and vLLM wheels bring CUDA 13."""
WHISPER_ON_TORCH = "asr: {backend: transformers, model: openai/whisper-large-v3-turbo, device: cuda}"
"""The fix for a GPU without CTranslate2's CUDA libraries: Whisper on the installed torch."""


def missing_cuda_library(err: BaseException) -> ModelError | None:
    """The one-line error for a CUDA library CTranslate2 cannot load, or None for other errors."""
    found = MISSING_LIBRARY.search(str(err))
    if found is None:
        return None
    return ModelError(
        f"asr: faster-whisper cannot load {found.group(1)} (CTranslate2 needs CUDA 12 libraries this install "
        f"lacks); use {WHISPER_ON_TORCH} in the models profile, or device: cpu"
    )


class FasterWhisperRecognizer:
    def __init__(self, cfg: RoleConfig, meter: UsageMeter) -> None:
        import ctranslate2
        from faster_whisper import BatchedInferencePipeline, WhisperModel

        self.cfg, self.meter = cfg, meter
        device = cfg.device or "auto"
        try:
            self.model = WhisperModel(str(cfg.model), device=device, compute_type=cfg.dtype or "default")
        except (OSError, RuntimeError, ValueError) as exc:
            missing = missing_cuda_library(exc)
            if missing is not None:
                raise missing from None
            raise ModelError(f"asr: cannot load faster-whisper model {cfg.model!r} ({' '.join(str(exc).split())})") from None
        on_gpu = device == "cuda" or device == "auto" and ctranslate2.get_cuda_device_count() > 0
        self.batched = BatchedInferencePipeline(self.model) if cfg.options.get("batched", on_gpu) else None
        self.language = cfg.options.get("language")

    def transcribe(self, audio: np.ndarray, spans: Sequence[Span]) -> list[Segment]:
        try:
            return self._transcribe(audio, spans)
        except RuntimeError as err:
            missing = missing_cuda_library(err)
            if missing is None:
                raise
            raise missing from None

    def _transcribe(self, audio: np.ndarray, spans: Sequence[Span]) -> list[Segment]:
        if not spans:
            return []
        started = time.perf_counter()
        common: dict[str, Any] = {
            "language": self.language,
            "word_timestamps": True,
            "max_new_tokens": min(self.cfg.max_tokens, MAX_NEW_TOKENS),
            **self.cfg.options.get("transcribe", {}),
        }
        if self.batched is not None:
            found, _ = self.batched.transcribe(
                audio, clip_timestamps=[{"start": a, "end": b} for a, b in spans], batch_size=self.cfg.batch_size, **common
            )
        else:
            flat = [t for span in spans for t in span]
            found, _ = self.model.transcribe(audio, clip_timestamps=flat, vad_filter=False, **common)
        out = []
        for seg in found:
            words = [w for w in seg.words or [] if w.word.strip()]
            start, end = (words[0].start, words[-1].end) if words else (seg.start, seg.end)
            span = next((s for s in spans if s[0] <= start < s[1]), (spans[0][0], spans[-1][1]))
            kept = _segment(start, end, seg.text, span)
            if kept:
                out.append(kept)
        _metered(self.meter, started, 1)
        return out


class TransformersRecognizer:
    def __init__(self, cfg: RoleConfig, meter: UsageMeter) -> None:
        import torch
        from transformers import pipeline

        self.cfg, self.meter = cfg, meter
        device = cfg.device or ("cuda" if torch.cuda.is_available() else "cpu")
        try:
            self.pipe = pipeline(
                "automatic-speech-recognition", model=str(cfg.model), device=device, dtype=cfg.dtype or "auto"
            )
        except (OSError, ValueError) as exc:
            raise ModelError(f"asr: cannot load transformers model {cfg.model!r} ({' '.join(str(exc).split())})") from None
        self.generate_kwargs: dict[str, Any] = {"max_new_tokens": min(cfg.max_tokens, MAX_NEW_TOKENS)}
        if cfg.options.get("language"):
            self.generate_kwargs["language"] = cfg.options["language"]

    def transcribe(self, audio: np.ndarray, spans: Sequence[Span]) -> list[Segment]:
        if not spans:
            return []
        started = time.perf_counter()
        inputs = [
            {"raw": audio[round(a * SAMPLE_RATE) : round(b * SAMPLE_RATE)], "sampling_rate": SAMPLE_RATE} for a, b in spans
        ]
        results = self.pipe(
            inputs,
            return_timestamps=True,
            batch_size=self.cfg.batch_size,
            generate_kwargs=self.generate_kwargs,
        )
        out = []
        for (a, b), result in zip(spans, results):
            chunks = result.get("chunks") or [{"timestamp": (None, None), "text": result.get("text", "")}]
            for chunk in chunks:
                t0, t1 = chunk.get("timestamp") or (None, None)
                kept = _segment(None if t0 is None else a + t0, None if t1 is None else a + t1, chunk["text"], (a, b))
                if kept:
                    out.append(kept)
        _metered(self.meter, started, len(spans))
        return out


def wav_bytes(audio: np.ndarray) -> bytes:
    """16-bit PCM WAV of 16 kHz mono float audio, the upload form every transcription API takes."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(SAMPLE_RATE)
        out.writeframes((np.clip(audio, -1.0, 1.0) * 32767).astype("<i2").tobytes())
    return buffer.getvalue()


class OpenAIRecognizer:
    def __init__(self, cfg: RoleConfig, meter: UsageMeter) -> None:
        from videomem.models.openai_compat import _Client

        self.cfg, self.meter = cfg, meter
        self.client = _Client(cfg, ROLE)

    def _one(self, audio: np.ndarray, span: Span) -> list[Segment]:
        a, b = span
        # verbose_json times segments by default; naming the granularity as well makes servers
        # that validate form fields (`transformers serve`) refuse the upload with HTTP 422.
        form = {"model": str(self.cfg.model), "response_format": "verbose_json"}
        if self.cfg.options.get("language"):
            form["language"] = str(self.cfg.options["language"])
        clip = audio[round(a * SAMPLE_RATE) : round(b * SAMPLE_RATE)]
        reply = self.client.post("/audio/transcriptions", form, files={"file": ("speech.wav", wav_bytes(clip), "audio/wav")})
        raw = reply.get("segments") or [{"start": None, "end": None, "text": reply.get("text", "")}]
        try:
            found = [
                _segment(None if s.get("start") is None else a + float(s["start"]),
                         None if s.get("end") is None else a + float(s["end"]), str(s.get("text", "")), span)
                for s in raw
            ]
        except (TypeError, ValueError, AttributeError):
            raise ModelError(f"asr at {self.client.base_url}: transcription reply has malformed segments") from None
        return [s for s in found if s]

    def transcribe(self, audio: np.ndarray, spans: Sequence[Span]) -> list[Segment]:
        started = time.perf_counter()
        out = [seg for span in spans for seg in self._one(audio, span)]
        _metered(self.meter, started, len(spans))
        return out
