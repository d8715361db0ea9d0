"""The transformers backend on a tiny random Qwen2-VL built here (no download)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch
from PIL import Image

from tiny_models import MERGE, build_tiny_qwen2_vl
from videomem.config import RoleConfig
from videomem.errors import ModelError
from videomem.models.base import CaptionOut, ClipView, LMRequest, UsageMeter, VLRequest
from videomem.models.hf_transformers import TransformersEngine
from videomem.models.prompted import PromptedVision

@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_qwen2_vl(tmp_path_factory.mktemp("tiny-qwen2-vl"))


def role(path: Path, **overrides: Any) -> RoleConfig:
    fields = {"backend": "transformers", "model": str(path), "device": "cpu", "max_tokens": 6, "batch_size": 4}
    return RoleConfig.model_validate(fields | overrides)


class GenerateSpy:
    """Wraps model.generate to keep what went in and what came out."""

    def __init__(self, model: Any) -> None:
        self.original = model.generate
        self.calls: list[tuple[dict[str, Any], torch.Tensor]] = []

    def __call__(self, **kwargs: Any) -> torch.Tensor:
        output = self.original(**kwargs)
        self.calls.append((kwargs, output))
        return output


def frames(n: int) -> list[Image.Image]:
    return [Image.new("RGB", (80, 60), (40 * i, 200, 90)) for i in range(n)]


def test_images_and_prompt_reach_the_model_and_tokens_come_back(tiny_model: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    meter = UsageMeter()
    engine = TransformersEngine(role(tiny_model), "vlm", meter)
    spy = GenerateSpy(engine.model)
    monkeypatch.setattr(engine.model, "generate", spy)
    schema = CaptionOut.model_json_schema()
    requests = [
        VLRequest("caption clip one", frames(1), json_schema=schema),
        VLRequest("caption clip two", frames(2), system="be brief", max_tokens=4),
    ]
    generations = engine.generate(requests)

    [(inputs, output)] = spy.calls
    grid = inputs["image_grid_thw"]
    assert len(grid) == 3, "one grid per image: 1 in the first request, 2 in the second"
    patches = grid.prod(dim=1)
    assert inputs["pixel_values"].shape[0] == int(patches.sum())
    tokens = (patches // MERGE**2).tolist()
    image_token = engine.model.config.image_token_id
    assert (inputs["input_ids"] == image_token).sum(dim=1).tolist() == [tokens[0], tokens[1] + tokens[2]]
    assert inputs["max_new_tokens"] == 6, "the largest budget in the batch"
    assert (inputs["attention_mask"][:, -1] == 1).all(), "left padding: every row ends in real tokens"

    prompts = engine.tokenizer.batch_decode(inputs["input_ids"], skip_special_tokens=False)
    assert "caption clip one" in prompts[0] and "Reply with one JSON object" in prompts[0] and '"caption"' in prompts[0]
    assert "<|im_start|>system\nbe brief<|im_end|>" in prompts[1] and "caption clip two" in prompts[1]
    assert prompts[0].rstrip().endswith("<|im_start|>assistant")

    new_tokens = output[:, inputs["input_ids"].shape[1] :]
    eos = engine.model.generation_config.eos_token_id
    for generation, row, mask in zip(generations, new_tokens, inputs["attention_mask"]):
        ended = (row == eos).nonzero()
        expected = int(ended[0]) + 1 if len(ended) else len(row)
        assert 1 <= generation.usage.completion_tokens == expected <= 6
        assert generation.usage.prompt_tokens == int(mask.sum())
        assert isinstance(generation.text, str)
    total = meter.by_role()["vlm"]
    assert total.calls == 2 and total.seconds > 0
    assert total.completion_tokens == sum(g.usage.completion_tokens for g in generations)


def test_text_requests_send_no_pixels_and_roles_share_the_model(tiny_model: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vlm = TransformersEngine(role(tiny_model), "vlm", UsageMeter())
    llm = TransformersEngine(role(tiny_model, options={"kind": "vlm"}), "llm", UsageMeter())
    assert llm.model is vlm.model, "one loaded copy for two roles"
    spy = GenerateSpy(llm.model)
    monkeypatch.setattr(llm.model, "generate", spy)
    [generation] = llm.generate([LMRequest("summarise these captions")])
    [(inputs, _)] = spy.calls
    assert "pixel_values" not in inputs
    assert "summarise these captions" in llm.tokenizer.decode(inputs["input_ids"][0])
    assert generation.usage.completion_tokens >= 1


def test_batches_are_split_by_batch_size(tiny_model: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    engine = TransformersEngine(role(tiny_model, batch_size=2, max_tokens=2), "vlm", UsageMeter())
    spy = GenerateSpy(engine.model)
    monkeypatch.setattr(engine.model, "generate", spy)
    generations = engine.generate([VLRequest(f"clip {i}", frames(1)) for i in range(3)])
    assert len(generations) == 3 and [call[0]["input_ids"].shape[0] for call in spy.calls] == [2, 1]


def test_prompted_tasks_on_a_model_that_writes_noise_fail_with_one_line(tiny_model: Path) -> None:
    engine = TransformersEngine(role(tiny_model, json_repairs=1), "vlm", UsageMeter())
    clip = ClipView("v", 0.0, 10.0, frames(2), [2.5, 7.5])
    with pytest.raises(ModelError) as info:
        PromptedVision(engine, role(tiny_model, json_repairs=1)).caption_clips([clip])
    assert "\n" not in str(info.value) and str(info.value).startswith("caption_clip: the vlm model")


def test_a_missing_model_is_a_model_error(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match=r"vlm: transformers cannot load '.*nowhere' as a vlm"):
        TransformersEngine(role(tmp_path / "nowhere"), "vlm", UsageMeter())
