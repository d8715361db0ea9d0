"""Contract: the faster_whisper backend's batched pipeline on a tiny random Whisper.

The Whisper is built with transformers (random weights, fixed seed) and converted by
ctranslate2's own converter, as a user converts a fine-tuned checkpoint; faster-whisper loads
it by path. The batched pipeline takes clip timestamps in seconds since faster-whisper 1.2.1
(sample indices before, which a float cannot slice): each speech span must come back decoded
at its own time, with word timestamps. What the model says is noise.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from faster_whisper import BatchedInferencePipeline
from tiny_models import build_tiny_whisper, convert_to_ctranslate2

from videomem.config import RoleConfig
from videomem.models.asr import FasterWhisperRecognizer, build_recognizer
from videomem.models.usage import UsageMeter
from videomem.video.audio import SAMPLE_RATE

SPANS = [(1.0, 3.5), (6.0, 9.25)]


@pytest.fixture(scope="module")
def converted_whisper(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("contract-whisper")
    return convert_to_ctranslate2(build_tiny_whisper(root / "hf", init_std=0.3), root / "ct2")


def test_batched_pipeline_decodes_each_span_at_its_seconds_with_word_timestamps(
    converted_whisper: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[tuple[dict[str, Any], list[Any]]] = []
    transcribe = BatchedInferencePipeline.transcribe

    def spy(self: BatchedInferencePipeline, audio: np.ndarray, **kwargs: Any) -> tuple[Any, Any]:
        segments, info = transcribe(self, audio, **kwargs)
        segments = list(segments)
        calls.append((kwargs, segments))
        return iter(segments), info

    monkeypatch.setattr(BatchedInferencePipeline, "transcribe", spy)
    # Greedy: the temperature fallback samples, and a random model always "fails" its checks.
    options = {"batched": True, "transcribe": {"temperature": 0.0}}
    cfg = RoleConfig(backend="faster_whisper", model=str(converted_whisper), device="cpu", max_tokens=24,
                     batch_size=4, options=options)
    meter = UsageMeter()
    recognizer = build_recognizer(cfg, meter)
    assert isinstance(recognizer, FasterWhisperRecognizer) and recognizer.batched is not None
    audio = (0.1 * np.random.default_rng(0).standard_normal(12 * SAMPLE_RATE)).astype(np.float32)

    found = recognizer.transcribe(audio, SPANS)

    [(kwargs, raw)] = calls
    assert kwargs["clip_timestamps"] == [{"start": a, "end": b} for a, b in SPANS], "seconds, not samples"
    assert kwargs["word_timestamps"] is True and kwargs["batch_size"] == 4 and kwargs["max_new_tokens"] == 24
    first_words = [segment.words[0].start for segment in raw if segment.words]
    for a, b in SPANS:
        assert any(a <= t < b for t in first_words), f"no words decoded inside the span {a}-{b} s"
    assert found, "words came back"
    for segment in found:
        assert segment.text and any(a <= segment.t_start <= segment.t_end <= b for a, b in SPANS), segment
    assert meter.by_role()["asr"].calls == 1
