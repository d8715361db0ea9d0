"""Contract: the transformers backend on tiny random Qwen2.5-VL and Qwen3-VL checkpoints.

Each checkpoint is built here with the real architecture (fixed seed), saved to a directory and
loaded by path through AutoProcessor / AutoModelForImageTextToText, as a hub model is. A wrong
argument name, processor call or chat-template format fails here, not in a GPU run. What the
models write is noise: the tests check the calls, the padding and that unusable replies become
recorded clip failures.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import make_video
from PIL import Image
from test_hf_backend import GenerateSpy, role
from tiny_models import MERGE, build_tiny_qwen2_5_vl, build_tiny_qwen3_vl

from videomem.config import PipelineConfig, load_models
from videomem.models.engines import VLRequest
from videomem.models.usage import UsageMeter
from videomem.models.hf_transformers import TransformersEngine
from videomem.models.registry import ModelSet
from videomem.pipeline.runner import ingest
from videomem.store import Store

ARCHITECTURES: dict[str, tuple[Callable[[Path], Path], str]] = {
    "qwen2.5-vl": (build_tiny_qwen2_5_vl, "Qwen2_5_VLForConditionalGeneration"),
    "qwen3-vl": (build_tiny_qwen3_vl, "Qwen3VLForConditionalGeneration"),
}


@pytest.fixture(scope="session", params=list(ARCHITECTURES))
def tiny_vlm(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """(checkpoint directory, the model class transformers must load from it)."""
    build, cls = ARCHITECTURES[request.param]
    return build(tmp_path_factory.mktemp(request.param)), cls


def new_tokens(spy: GenerateSpy, call: int) -> list[list[int]]:
    """The tokens generated in the spy's `call`-th call, row by row."""
    inputs, output = spy.calls[call]
    return output[:, inputs["input_ids"].shape[1] :].tolist()


def frames(n: int, shade: int) -> list[Image.Image]:
    return [Image.new("RGB", (80, 60), (shade, 40 * i, 255 - shade)) for i in range(n)]


def test_a_padded_batch_generates_what_each_request_generates_alone(
    tiny_vlm: tuple[Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path, cls = tiny_vlm
    engine = TransformersEngine(role(path, max_tokens=8), "vlm", UsageMeter())
    assert type(engine.model).__name__ == cls
    spy = GenerateSpy(engine.model)
    monkeypatch.setattr(engine.model, "generate", spy)
    requests = [
        VLRequest("What happens?", frames(2, 30)),
        VLRequest("Describe who is in view, what each of them does and what changes.", frames(2, 220), system="Be brief."),
    ]
    together = engine.generate(requests)
    alone = [engine.generate([request])[0] for request in requests]

    inputs, _ = spy.calls[0]
    mask = inputs["attention_mask"]
    assert inputs["input_ids"].shape[0] == 2 and (mask[:, -1] == 1).all(), "one batch, left-padded"
    lengths = mask.sum(dim=1).tolist()
    assert lengths[0] != lengths[1], "the prompts differ in length, so one row is padded"
    image_tokens = (inputs["image_grid_thw"].prod(dim=1) // MERGE**2).tolist()
    per_row = (inputs["input_ids"] == engine.model.config.image_token_id).sum(dim=1).tolist()
    assert len(image_tokens) == 4 and per_row == [image_tokens[0] + image_tokens[1], image_tokens[2] + image_tokens[3]]

    batched = new_tokens(spy, 0)
    for i, (one, solo) in enumerate(zip(together, alone)):
        row = lengths.index(one.usage.prompt_tokens)  # the engine sorts a batch by length
        n = one.usage.completion_tokens
        assert n == solo.usage.completion_tokens >= 1
        assert batched[row][:n] == new_tokens(spy, i + 1)[0][:n], "padding changed what the model generated"
        assert one.usage.prompt_tokens == solo.usage.prompt_tokens
        assert (one.text, one.finish_reason) == (solo.text, solo.finish_reason)


def test_caption_and_objects_from_noise_are_recorded_as_clip_failures(
    tiny_vlm: tuple[Path, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two clips of one video go to the model in one padded batch (the first clip carries a
    spoken line from the sidecar subtitles, so its prompt is longer); the noise that comes back
    is recorded against each clip for caption and objects, and the run finishes."""
    path, _ = tiny_vlm
    video = make_video(tmp_path / "contract.mp4", seconds=20, fps=5)
    video.with_suffix(".srt").write_text("1\n00:00:02,000 --> 00:00:06,000\nPut the red key under the blue mat.\n\n")
    vlm = role(path, max_tokens=12, json_repairs=1)
    cfg = load_models().model_copy(update={"vlm": vlm, "llm": vlm.model_copy(update={"options": {"kind": "vlm"}})})
    models = ModelSet(cfg)
    spy = GenerateSpy(models.vision.engine.model)
    monkeypatch.setattr(models.vision.engine.model, "generate", spy)
    store = Store(tmp_path / "store", create=True)
    pipeline = PipelineConfig(clip_seconds=10, frames_per_clip=2, stages=("sample", "caption", "objects"))

    report = ingest([video], store, pipeline, lambda: models, show_progress=False)

    first, _ = spy.calls[0]
    assert first["input_ids"].shape[0] == 2 and int((first["attention_mask"] == 0).sum()) > 0
    assert first["image_grid_thw"].shape[0] == 4, "two frames per clip"
    prompts = models.vision.engine.tokenizer.batch_decode(first["input_ids"], skip_special_tokens=True)
    assert sum("Put the red key under the blue mat." in p for p in prompts) == 1
    failed = {(r["stage"], r["unit"]): r for r in store.failures()}
    captioned = {r[0] for r in store.query("SELECT c.idx FROM events e JOIN clips c ON c.id = e.clip_id")}
    for idx in (0, 1):
        assert (idx in captioned) != (("caption", f"contract:{idx}") in failed), "each clip parsed or recorded"
    assert failed, "a random model writes no usable JSON"
    for row in failed.values():
        assert row["stage"] in ("caption", "objects") and row["error"].startswith("describe_clip: ")
        assert "\n" not in row["error"] and row["attempts"] == 1
    assert {unit for unit, _ in report.all_failures()} == {unit for _, unit in failed}
    assert report.usage["vlm"].calls >= 2 and report.usage["vlm"].prompt_tokens > 0
