"""Contract: the `openai` backend against an OpenAI-compatible server that is not ours.

`transformers serve` runs in a subprocess on a free port of 127.0.0.1 (CPU, no hub: each
request's `model` is a local checkpoint directory) and serves a tiny random Qwen2.5-VL and a
tiny random Whisper built here. The project's backend sends it what a real run sends: frames as
base64 data URLs for the caption stage and `video.qa`, the agent's planner and answer prompts,
and speech spans to `/v1/audio/transcriptions`. The models write noise, so every reply is
unusable: it must come back as a recorded failure (a clip's failure row, a tool's observation,
a question's one-line error), never as a crash, and never as a transport error.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
from conftest import make_video
from PIL import Image
from tiny_models import MERGE, build_tiny_qwen2_5_vl, build_tiny_whisper

from videomem.agent.react import Agent
from videomem.agent.tools import Memories, Toolbox
from videomem.config import AgentConfig, ModelsConfig, PipelineConfig, RoleConfig, load_models
from videomem.errors import MalformedOutputError
from videomem.models.asr import OpenAIRecognizer
from videomem.models.engines import VLRequest
from videomem.models.usage import UsageMeter
from videomem.models.openai_compat import OpenAICompatEngine
from videomem.models.registry import ModelSet
from videomem.pipeline.runner import ingest
from videomem.store import Store
from videomem.video.audio import SAMPLE_RATE

START_S = 120
"""Seconds the server may take to come up (it imports torch and transformers)."""
TRANSPORT = ("cannot connect", "HTTP ", "no answer", "not JSON")
"""Words of the backend's transport errors: none may appear, every request must be served."""


@dataclass(frozen=True)
class Served:
    base_url: str
    vlm: Path
    whisper: Path
    log: Path


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    from transformers.utils.import_utils import is_serve_available

    assert is_serve_available(), "transformers serve needs fastapi, uvicorn, openai (pip install -e '.[dev]')"
    root = tmp_path_factory.mktemp("contract-serve")
    port = _free_port()
    log = root / "serve.log"
    command = [sys.executable, "-m", "transformers.cli.transformers", "serve", "--device", "cpu",
               "--host", "127.0.0.1", "--port", str(port), "--log-level", "info"]
    env = os.environ | {"HF_HUB_OFFLINE": "1"}
    with log.open("wb") as out:
        server = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env)
    try:
        # The models are loaded by path per request, so they are built while the server starts.
        vlm = build_tiny_qwen2_5_vl(root / "qwen2.5-vl")
        whisper = build_tiny_whisper(root / "whisper", init_std=0.3)
        deadline = time.monotonic() + START_S
        while True:
            assert server.poll() is None, f"transformers serve exited: {log.read_text()[-2000:]}"
            assert time.monotonic() < deadline, f"transformers serve did not start: {log.read_text()[-2000:]}"
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.2)
        yield Served(f"http://127.0.0.1:{port}/v1", vlm, whisper, log)
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def role(served: Served, model: Path, **overrides: Any) -> RoleConfig:
    fields = {"backend": "openai", "model": str(model), "base_url": served.base_url, "max_tokens": 12,
              "json_repairs": 1, "concurrency": 2, "timeout_s": 60, "deadline_s": 120}
    return RoleConfig.model_validate(fields | overrides)


def profile(served: Served) -> ModelsConfig:
    vlm = role(served, served.vlm)
    return load_models().model_copy(update={"vlm": vlm, "llm": vlm})


def frames(n: int) -> list[Image.Image]:
    return [Image.new("RGB", (80, 60), (200, 40 * i, 90)) for i in range(n)]


def test_frames_reach_the_served_model_as_image_tokens(served: Served) -> None:
    from transformers import AutoProcessor

    meter = UsageMeter()
    engine = OpenAICompatEngine(role(served, served.vlm), "vlm", meter)
    with_frames, without = engine.generate([VLRequest("What is in view?", frames(2)), VLRequest("What is in view?", [])])
    assert with_frames.error is None and without.error is None
    assert with_frames.usage.completion_tokens >= 1 and with_frames.finish_reason in ("stop", "length")
    grid = AutoProcessor.from_pretrained(served.vlm).image_processor(images=frames(1))["image_grid_thw"]
    per_frame = int(grid.prod()) // MERGE**2 + 2  # the pads between <|vision_start|> and <|vision_end|>
    assert with_frames.usage.prompt_tokens - without.usage.prompt_tokens == 2 * per_frame
    assert meter.by_role()["vlm"].calls == 2


def test_caption_stage_through_the_server_records_unusable_replies(served: Served, tmp_path: Path) -> None:
    video = make_video(tmp_path / "served.mp4", seconds=20, fps=5)
    models = ModelSet(profile(served))
    store = Store(tmp_path / "store", create=True)
    pipeline = PipelineConfig(clip_seconds=10, frames_per_clip=2, stages=("sample", "caption", "objects"))

    report = ingest([video], store, pipeline, lambda: models, show_progress=False)

    failed = {(r["stage"], r["unit"]): r["error"] for r in store.failures()}
    assert set(failed) == {(stage, f"served:{i}") for stage in ("caption", "objects") for i in (0, 1)}
    for error in failed.values():
        assert error.startswith("describe_clip: ") and "\n" not in error
        assert not any(word in error for word in TRANSPORT), error
    assert {unit for unit, _ in report.all_failures()} == {"served:0", "served:1"}
    usage = report.usage["vlm"]
    assert usage.calls >= 2 and usage.prompt_tokens > 0 and usage.completion_tokens > 0


@pytest.fixture
def sampled(tmp_path: Path) -> Store:
    store = Store(tmp_path / "store", create=True)
    pipeline = PipelineConfig(clip_seconds=10, frames_per_clip=2, stages=("sample",))
    ingest([make_video(tmp_path / "qa.mp4", seconds=20, fps=5)], store, pipeline, ModelSet.from_file, show_progress=False)
    return store


def test_video_qa_and_the_agent_through_the_server_fail_in_one_line(served: Served, sampled: Store) -> None:
    models = ModelSet(profile(served))
    cfg = AgentConfig(kind="react", tools=("video.qa",), max_steps=3, call_retries=0)
    toolbox = Toolbox(sampled, models, Memories.open(sampled, models, cfg), cfg, question="What colour is the box?")
    outcome = toolbox.call("video.qa", {"question": "What colour is the box?", "t_start": 0, "t_end": 20})
    assert outcome.observation.startswith("video.qa failed: answer_from_frames: the vlm model")
    assert "\n" not in outcome.observation and not any(word in outcome.observation for word in TRANSPORT)

    steps: list[dict[str, Any]] = []
    with pytest.raises(MalformedOutputError) as info:
        Agent(sampled, models, cfg).ask("What colour is the box?", on_step=steps.append)
    assert str(info.value).startswith("answer: the llm model") and "\n" not in str(info.value)
    assert steps[0]["tool"] == "plan" and steps[0]["error"], "the planner's noise is a recorded step"
    assert not any(word in str(info.value) for word in TRANSPORT)
    usage = models.meter.by_role()
    assert usage["vlm"].calls >= 1 and usage["llm"].calls >= 2, "planner and answer were asked"


def test_openai_asr_role_transcribes_speech_spans_through_the_server(served: Served) -> None:
    spans = [(1.0, 3.5), (6.0, 9.25)]
    meter = UsageMeter()
    cfg = RoleConfig(backend="openai", model=str(served.whisper), base_url=served.base_url, options={"language": "en"})
    audio = (0.1 * np.random.default_rng(0).standard_normal(12 * SAMPLE_RATE)).astype(np.float32)
    found = OpenAIRecognizer(cfg, meter).transcribe(audio, spans)
    assert meter.by_role()["asr"].calls == 2
    # The server answers text without segments: each span's text spans its speech.
    assert found and all((s.t_start, s.t_end) in spans and s.text for s in found)
