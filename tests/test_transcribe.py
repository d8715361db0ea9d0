"""The transcribe stage: audio in chunks, Silero VAD, the asr backends, alignment, resume.

One spoken track (conftest's `speech_video`) serves every test: 24 s of video, 10-s clips, a line
spoken at 3 s (clip 0) and one at 14 s (clip 1), silence elsewhere. A fake recognizer returns known
segments where words do not matter; the tiny random Whispers (transformers, and the same
converted by ctranslate2 for faster-whisper) and a local HTTP server check that audio reaches
each real backend and timed segments come back.
"""

from __future__ import annotations

import email
import email.policy
import io
import json
import shutil
import threading
import wave
from collections.abc import Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import SPEECH_LINES as LINES
from conftest import SPEECH_SECONDS as SECONDS
from conftest import make_video
from tiny_models import build_tiny_whisper, convert_to_ctranslate2

from videomem.config import default_path, shipped_profiles, ModelsConfig, PipelineConfig, RoleConfig, load_models
from videomem.errors import ModelError
from videomem.store.clips import clips_of, speech_in, transcript_of
from videomem.store.frames import clip_sources
from videomem.models.asr import OpenAIRecognizer, Span, speech_spans
from videomem.models.usage import UsageMeter
from videomem.models.registry import ModelSet
from videomem.core import VideoSource
from videomem.pipeline.runner import ingest
from videomem.pipeline.transcribe import TranscribeStage, chunk_unit, finished_unit, no_audio_unit
from videomem.store import Store
from videomem.server.summary import summarize
from videomem.video.audio import SAMPLE_RATE, audio_chunks
from videomem.video.transcripts import SPEECH_ONLY, Segment

PIPE = PipelineConfig(clip_seconds=10, frames_per_clip=1, stages=("sample", "transcribe"), transcribe_chunk_seconds=12)


@pytest.fixture(scope="session")
def speech_spans_found(speech_video: Path) -> list[Span]:
    chunk = next(audio_chunks(speech_video, SECONDS + 1))
    return speech_spans(chunk.samples)


class FakeRecognizer:
    """One segment per speech span, stretched `extend` seconds past it (to cross clip edges);
    `fail_on` chunk calls raise, as a server that went away would."""

    def __init__(self, extend: float = 0.0, fail_on: int | None = None) -> None:
        self.extend, self.fail_on = extend, fail_on
        self.calls: list[tuple[int, list[Span]]] = []

    def transcribe(self, audio: np.ndarray, spans: Sequence[Span]) -> list[Segment]:
        self.calls.append((len(audio), list(spans)))
        if self.fail_on is not None and len(self.calls) - 1 == self.fail_on:
            raise ModelError("asr: server went away")
        return [Segment(a, b + self.extend, f"words at {a:.1f}") for a, b in spans]


def models_with(recognizer: object | None) -> ModelSet:
    models = ModelSet(load_models())
    models.__dict__["asr"] = recognizer  # fills the cached property, as a built backend would
    return models


def rows(store: Store) -> list[dict[str, Any]]:
    return [
        dict(r)
        for r in store.query(
            "SELECT c.idx, t.t_start, t.t_end, t.text, t.source FROM transcripts t JOIN clips c ON c.id = t.clip_id "
            "ORDER BY t.t_start, c.idx"
        )
    ]


def run(video: Path, store: Store, models: ModelSet, pipeline: PipelineConfig = PIPE, **kw: Any):
    return ingest([video], store, pipeline, lambda: models, show_progress=False, **kw)


def test_audio_streams_in_chunks_that_join_to_the_whole_track(speech_video: Path) -> None:
    whole = next(audio_chunks(speech_video, SECONDS + 1)).samples
    chunks = list(audio_chunks(speech_video, 7))
    assert [c.index for c in chunks] == list(range(len(chunks)))
    assert [c.t_start for c in chunks] == [7.0 * i for i in range(len(chunks))]
    assert all(len(c.samples) == 7 * SAMPLE_RATE for c in chunks[:-1])
    assert abs(len(whole) / SAMPLE_RATE - SECONDS) < 0.1
    np.testing.assert_array_equal(np.concatenate([c.samples for c in chunks]), whole)
    assert [c.index for c in audio_chunks(speech_video, 7, skip={0, 2})] == [1, 3]


def test_vad_finds_each_spoken_line(speech_spans_found: list[Span]) -> None:
    assert len(speech_spans_found) == len(LINES)
    for (a, b), (at, _) in zip(speech_spans_found, LINES):
        assert at - 0.5 < a < at + 0.5 and b - a > 1.0


def test_offline_profile_records_speech_not_transcribed(speech_video: Path, tmp_path: Path) -> None:
    store = Store(tmp_path / "s", create=True)
    report = run(speech_video, store, models_with(None))
    assert report.ok, report.all_failures()
    got = rows(store)
    assert [(r["idx"], r["text"], r["source"]) for r in got] == [(0, SPEECH_ONLY, "vad"), (1, SPEECH_ONLY, "vad")]
    assert all(at - 0.5 < r["t_start"] < at + 0.5 for r, (at, _) in zip(got, LINES))
    clip_ids = [r["id"] for r in store.query("SELECT id FROM clips ORDER BY idx")]
    assert transcript_of(store, clip_ids) == SPEECH_ONLY, "lines that only say someone spoke read as one"
    video_id = store.query("SELECT video_id FROM transcripts")[0]["video_id"]
    heard = speech_in(store, video_id, 0.0, SECONDS)
    assert len(heard) == len(LINES) and not any(line.transcribed for line in heard), "read back as heard, typed"
    views = [clip_sources(store, c) for c in clips_of(store, [video_id])]
    assert [line for v in views for line in v.speech] == list(heard), "a vision task sees the same typed lines"
    summary = summarize(store, models_with(None))
    assert (summary.transcripts, summary.transcript_clips, summary.clips) == ({"vad": 2}, {"vad": 2}, 3)


def test_segments_align_to_clips_across_chunks_and_resume(speech_video: Path, tmp_path: Path) -> None:
    store = Store(tmp_path / "s", create=True)
    broken = FakeRecognizer(extend=6.0, fail_on=1)
    report = run(speech_video, store, models_with(broken))
    assert not report.ok and "server went away" in report.all_failures()[0][1]
    assert store.done_units("transcribe") == {chunk_unit("speech", 0)}
    assert [r["idx"] for r in rows(store)] == [0, 1], "chunk 0's line, stretched into clip 1, is kept"

    fake = FakeRecognizer(extend=6.0)
    report = run(speech_video, store, models_with(fake))
    assert report.ok, report.all_failures()
    assert len(fake.calls) == 2 and fake.calls[0][0] == 12 * SAMPLE_RATE, "chunk 0, done before, is not redone"
    got = rows(store)
    # The first line (3-5.4 s, stretched to ~11 s) crosses into clip 1; the second (14-16.6 s,
    # stretched to ~22.6 s) into clip 2: a segment is stored with every clip it overlaps.
    assert [(r["idx"], r["source"]) for r in got] == [(0, "asr"), (1, "asr"), (1, "asr"), (2, "asr")]
    assert got[0]["t_start"] == got[1]["t_start"] and got[2]["t_start"] == got[3]["t_start"]
    assert 13.5 < got[2]["t_start"] < 14.5, "chunk 1's times are shifted by its start (12 s)"
    assert store.done_units("transcribe") == {chunk_unit("speech", i) for i in range(3)} | {finished_unit("speech")}

    again = FakeRecognizer()
    assert run(speech_video, store, models_with(again)).ok
    assert again.calls == [] and len(rows(store)) == 4, "a finished video is not transcribed again"


def test_a_model_redoes_vad_only_chunks_and_replaces_their_rows(speech_video: Path, tmp_path: Path) -> None:
    store = Store(tmp_path / "s", create=True)
    run(speech_video, store, models_with(None))
    assert {r["source"] for r in rows(store)} == {"vad"}
    run(speech_video, store, models_with(FakeRecognizer()))
    assert [(r["idx"], r["source"]) for r in rows(store)] == [(0, "asr"), (1, "asr")]


def unbuildable_asr() -> ModelSet:
    """A profile whose speech model cannot be built (its API key is not set)."""
    asr = RoleConfig(backend="openai", model="whisper-1", base_url="http://127.0.0.1:9/v1", api_key_env="VIDEOMEM_NO_SUCH_KEY")
    return ModelSet(load_models().model_copy(update={"asr": asr}))


def test_video_without_audio_is_recorded_not_failed(speech_video: Path, tmp_path: Path) -> None:
    video = make_video(tmp_path / "silent.mp4", seconds=4)
    store = Store(tmp_path / "s", create=True)
    report = run(video, store, unbuildable_asr())
    assert report.ok, "a file without sound needs no speech model"
    assert store.done_units("transcribe") == {no_audio_unit("silent")} and rows(store) == []

    report = run(speech_video, store, unbuildable_asr())
    assert [reason for _, reason in report.all_failures()] == [
        "asr: environment variable VIDEOMEM_NO_SUCH_KEY (api_key_env) is not set (re-run ingest to resume)"
    ]


def test_sidecar_wins_unless_the_pipeline_prefers_asr(speech_video: Path, tmp_path: Path) -> None:
    video = tmp_path / "talk.mp4"
    shutil.copy(speech_video, video)
    video.with_suffix(".srt").write_text("1\n00:00:02,000 --> 00:00:06,000\nSidecar line.\n")
    store = Store(tmp_path / "s", create=True)
    fake = FakeRecognizer()
    run(video, store, models_with(fake))
    assert fake.calls == [] and [(r["text"], r["source"]) for r in rows(store)] == [("Sidecar line.", "sidecar")]

    prefer_asr = PIPE.model_copy(update={"speech_source": "asr"})
    report = run(video, store, models_with(fake), prefer_asr, stages=["transcribe"])
    assert report.ok, report.all_failures()
    assert [(r["idx"], r["source"]) for r in rows(store)] == [(0, "asr"), (1, "asr")]


def test_imported_transcripts_count_as_given(speech_video: Path, tmp_path: Path) -> None:
    store = Store(tmp_path / "s", create=True)
    run(speech_video, store, models_with(None), stages=["sample"])
    with store.transaction() as tx:
        tx.execute(
            "INSERT INTO transcripts (clip_id, video_id, t_start, t_end, text, source) "
            "SELECT id, video_id, 3, 5, 'imported', 'egolifecap' FROM clips WHERE idx = 0"
        )
    fake = FakeRecognizer()
    assert run(speech_video, store, models_with(fake)).ok
    assert fake.calls == [] and [r["source"] for r in rows(store)] == ["egolifecap"]


def test_reset_forgets_speech_rows_and_progress(speech_video: Path, tmp_path: Path) -> None:
    store = Store(tmp_path / "s", create=True)
    run(speech_video, store, models_with(FakeRecognizer()))
    TranscribeStage().reset(store, [VideoSource(speech_video, "speech")])
    assert rows(store) == [] and store.done_units("transcribe") == set()


def test_asr_role_is_validated() -> None:
    base = load_models().model_dump()
    with pytest.raises(ValueError, match="asr.backend must be faster_whisper, transformers or openai"):
        ModelsConfig.model_validate({**base, "asr": {"backend": "open_clip", "model": "x"}})
    assert ModelsConfig.model_validate({**base, "asr": {"backend": "faster_whisper", "model": "large-v3"}}).asr


# ---------------------------------------------------------------- real backends


@pytest.fixture(scope="session")
def tiny_whisper(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_whisper(tmp_path_factory.mktemp("tiny-whisper"))


def check_backend_run(store: Store, spans: list[Span]) -> None:
    """Rows came from the model, each inside a speech span and stored with the clips it overlaps."""
    got = rows(store)
    assert got and {r["source"] for r in got} == {"asr"}
    for r in got:
        assert any(a - 0.05 <= r["t_start"] <= r["t_end"] <= b + 0.05 for a, b in spans), r
        assert r["idx"] * 10 <= r["t_end"] and r["t_start"] <= (r["idx"] + 1) * 10, r
    assert {r["idx"] for r in got} == {0, 1}


@pytest.mark.parametrize("backend", ["transformers", "faster_whisper"])
def test_tiny_whisper_backends_end_to_end(
    backend: str, tiny_whisper: Path, speech_video: Path, speech_spans_found: list[Span], tmp_path: Path
) -> None:
    model = tiny_whisper if backend == "transformers" else convert_to_ctranslate2(tiny_whisper, tmp_path / "ct2")
    # Greedy decoding only: faster-whisper's temperature fallback samples, and a random model's
    # output always "fails" the fallback's checks, so its text would differ from run to run.
    options = {"transcribe": {"temperature": 0.0}} if backend == "faster_whisper" else {}
    asr = RoleConfig(backend=backend, model=str(model), device="cpu", max_tokens=24, options=options)
    cfg = load_models().model_copy(update={"asr": asr})
    models = ModelSet(cfg)
    store = Store(tmp_path / "s", create=True)
    report = run(speech_video, store, models, PIPE.model_copy(update={"transcribe_chunk_seconds": 30}))
    assert report.ok, report.all_failures()
    check_backend_run(store, speech_spans_found)
    assert report.usage["asr"].calls >= 1


class TranscriptionServer:
    def __init__(self) -> None:
        self.uploads: list[tuple[dict[str, str], float]] = []
        handler = self.handler()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_port}/v1"

    def handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                assert self.path == "/v1/audio/transcriptions"
                body = self.rfile.read(int(self.headers["Content-Length"]))
                head = f"Content-Type: {self.headers['Content-Type']}\r\n\r\n".encode()
                parts = {p.get_param("name", header="content-disposition"): p for p in
                         email.message_from_bytes(head + body, policy=email.policy.HTTP).iter_parts()}
                with wave.open(io.BytesIO(parts.pop("file").get_content())) as w:
                    assert (w.getframerate(), w.getnchannels()) == (SAMPLE_RATE, 1)
                    seconds = w.getnframes() / SAMPLE_RATE
                fields = {name: part.get_content() for name, part in parts.items()}
                server.uploads.append((fields, seconds))
                reply = {"text": "hello there", "segments": [{"start": 0.25, "end": seconds - 0.25, "text": " hello there "}]}
                body = json.dumps(reply).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        return Handler


@pytest.fixture
def transcription_server() -> Iterator[TranscriptionServer]:
    server = TranscriptionServer()
    yield server
    server.httpd.shutdown()


def test_openai_backend_uploads_each_span_and_shifts_its_segments(
    transcription_server: TranscriptionServer, speech_video: Path, speech_spans_found: list[Span]
) -> None:
    cfg = RoleConfig(backend="openai", model="whisper-1", base_url=transcription_server.url, options={"language": "en"})
    audio = next(audio_chunks(speech_video, SECONDS + 1)).samples
    meter = UsageMeter()
    got = OpenAIRecognizer(cfg, meter).transcribe(audio, speech_spans_found)
    assert [fields for fields, _ in transcription_server.uploads] == [
        {"model": "whisper-1", "response_format": "verbose_json", "language": "en"}
    ] * len(speech_spans_found)
    for (_, seconds), (a, b) in zip(transcription_server.uploads, speech_spans_found):
        assert abs(seconds - (b - a)) < 1e-3
    assert got == [Segment(pytest.approx(a + 0.25), pytest.approx(b - 0.25), "hello there") for a, b in speech_spans_found]
    assert meter.by_role()["asr"].calls == len(speech_spans_found)


def test_a_missing_cuda_library_is_one_line_naming_the_fix(tiny_whisper: Path, tmp_path: Path, monkeypatch) -> None:
    """CTranslate2 4.x loads CUDA 12's cuBLAS at the first GPU call, which a CUDA 13 torch/vLLM
    install lacks. No GPU here: the recognizer's model raises CTranslate2's own message."""
    from videomem.models.asr import FasterWhisperRecognizer

    model = convert_to_ctranslate2(tiny_whisper, tmp_path / "ct2")
    recognizer = FasterWhisperRecognizer(RoleConfig(backend="faster_whisper", model=str(model), device="cpu"), UsageMeter())

    def no_cublas(*args, **kwargs):
        raise RuntimeError("Library libcublas.so.12 is not found or cannot be loaded")

    monkeypatch.setattr(recognizer.model, "transcribe", no_cublas)
    with pytest.raises(ModelError) as info:
        recognizer.transcribe(np.zeros(16000, dtype=np.float32), [(0.0, 1.0)])
    message = str(info.value)
    assert "libcublas.so.12" in message and "backend: transformers" in message and "\n" not in message


def test_the_shipped_gpu_profiles_transcribe_on_the_installed_torch() -> None:
    """faster-whisper on CUDA needs CUDA 12 libraries the vllm extra does not install."""
    for path in [Path(str(default_path("models", n))) for n in shipped_profiles("models")]:
        asr = load_models(path).asr
        if asr is not None and (asr.device or "").startswith("cuda"):
            assert asr.backend == "transformers", path.name
