"""The transformers backend on a tiny random Qwen2-VL built here (no download)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import torch
from PIL import Image

from tiny_models import MERGE, build_tiny_qwen2_vl
from videomem.config import RoleConfig
from videomem.errors import ModelError
from videomem.models.engines import LMRequest, VLRequest
from videomem.models.tasks.captioning import CaptionOut
from videomem.models.tasks.clips import Unusable
from videomem.models.usage import UsageMeter
from videomem.core import ClipView
from videomem.models.hf_transformers import TransformersEngine
from videomem.models.prompted import PromptedVision

@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_qwen2_vl(tmp_path_factory.mktemp("tiny-qwen2-vl"))


def role(path: Path, **overrides: Any) -> RoleConfig:
    """The backend's role on the CPU, or on VIDEOMEM_TEST_DEVICE (e.g. cuda) to run these checks on a GPU."""
    device = os.environ.get("VIDEOMEM_TEST_DEVICE", "cpu")
    fields = {"backend": "transformers", "model": str(path), "device": device, "max_tokens": 6, "batch_size": 4}
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
    requests = [  # the longer request first, as the engine sorts them
        VLRequest("caption clip two", frames(2), system="be brief", max_tokens=4),
        VLRequest("caption clip one", frames(1), json_schema=schema),
    ]
    generations = engine.generate(requests)

    [(inputs, output)] = spy.calls
    grid = inputs["image_grid_thw"]
    assert len(grid) == 3, "one grid per image: 2 in the first request, 1 in the second"
    patches = grid.prod(dim=1)
    assert inputs["pixel_values"].shape[0] == int(patches.sum())
    tokens = (patches // MERGE**2).tolist()
    image_token = engine.model.config.image_token_id
    assert (inputs["input_ids"] == image_token).sum(dim=1).tolist() == [tokens[0] + tokens[1], tokens[2]]
    assert inputs["max_new_tokens"] == 6, "the largest budget in the batch"
    assert (inputs["attention_mask"][:, -1] == 1).all(), "left padding: every row ends in real tokens"

    prompts = engine.tokenizer.batch_decode(inputs["input_ids"], skip_special_tokens=False)
    assert "caption clip one" in prompts[1] and "Reply with one JSON object" in prompts[1] and '"caption"' in prompts[1]
    assert "<|im_start|>system\nbe brief<|im_end|>" in prompts[0] and "caption clip two" in prompts[0]
    assert prompts[1].rstrip().endswith("<|im_start|>assistant")

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
    options = {"generate": {"cache_implementation": "static"}}
    engine = TransformersEngine(role(tiny_model, batch_size=2, max_tokens=2, options=options), "vlm", UsageMeter())
    spy = GenerateSpy(engine.model)
    monkeypatch.setattr(engine.model, "generate", spy)
    generations = engine.generate([VLRequest(f"clip {i}", frames(1)) for i in range(3)])
    assert len(generations) == 3 and [call[0]["input_ids"].shape[0] for call in spy.calls] == [2, 1]
    assert all(call[0]["cache_implementation"] == "static" for call in spy.calls), "options.generate reaches generate"


def test_prompted_tasks_on_a_model_that_writes_noise_fail_with_one_line(tiny_model: Path) -> None:
    engine = TransformersEngine(role(tiny_model, json_repairs=1), "vlm", UsageMeter())
    clip = ClipView("v", 0.0, 10.0, frames(2), [2.5, 7.5])
    [unusable] = PromptedVision(engine, role(tiny_model, json_repairs=1)).caption_clips([clip])
    assert isinstance(unusable, Unusable) and unusable.error.startswith("caption_clip: ")
    with pytest.raises(ModelError) as info:
        PromptedVision(engine, role(tiny_model, json_repairs=0)).answer_from_frames("what?", clip)
    assert "\n" not in str(info.value) and str(info.value).startswith("answer_from_frames: the vlm model")


def test_a_missing_model_is_a_model_error(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match=r"vlm: transformers cannot load '.*nowhere' as a vlm"):
        TransformersEngine(role(tmp_path / "nowhere"), "vlm", UsageMeter())


# ------------------------------------------------------------ Qwen2.5-VL and GPU-minded batching


@pytest.fixture(scope="module")
def tiny_qwen2_5(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from random_weights import save_random_qwen2_5_vl

    return save_random_qwen2_5_vl(tmp_path_factory.mktemp("tiny-qwen2.5-vl"))


def test_qwen2_5_vl_loads_with_torchvision_preprocessing_and_sdpa(tiny_qwen2_5: Path) -> None:
    from transformers.image_processing_backends import TorchvisionBackend

    engine = TransformersEngine(role(tiny_qwen2_5), "vlm", UsageMeter())
    assert type(engine.model).__name__ == "Qwen2_5_VLForConditionalGeneration"
    assert isinstance(engine.processor.image_processor, TorchvisionBackend)
    assert engine.model.config._attn_implementation == "sdpa"


def test_requests_are_sorted_by_length_into_batches_and_come_back_in_order(
    tiny_qwen2_5: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = TransformersEngine(role(tiny_qwen2_5, batch_size=2, max_tokens=3), "vlm", UsageMeter())
    spy = GenerateSpy(engine.model)
    monkeypatch.setattr(engine.model, "generate", spy)
    image_counts = [1, 2, 1, 2]
    requests = [VLRequest(f"clip number {i}", frames(n)) for i, n in enumerate(image_counts)]
    generations = engine.generate(requests)
    tokens = engine.model.config.image_token_id
    per_batch = [(inputs["input_ids"] == tokens).sum(dim=1).tolist() for inputs, _ in spy.calls]
    assert len(per_batch) == 2 and per_batch[0][0] == per_batch[0][1] > per_batch[1][0] == per_batch[1][1]
    prompt_tokens = [g.usage.prompt_tokens for g in generations]
    assert prompt_tokens[1] == prompt_tokens[3] > prompt_tokens[0] == prompt_tokens[2], "each back in its place"
    eos = engine.model.generation_config.eos_token_id
    rows = {}
    for inputs, output in spy.calls:
        for ids, row in zip(inputs["input_ids"], output[:, inputs["input_ids"].shape[1] :]):
            rows[engine.tokenizer.decode(ids)] = row.tolist()
    for i, generation in enumerate(generations):
        [row] = [row for prompt, row in rows.items() if f"clip number {i}<" in prompt]
        assert generation.finish_reason == ("stop" if eos in row else "length"), "cut by the budget: length"


def test_auto_batch_size_is_a_fixed_fallback_on_the_cpu(tiny_qwen2_5: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from videomem.models.hf_transformers import AUTO_CPU_BATCH

    cpu = role(tiny_qwen2_5, batch_size="auto", max_tokens=1, device="cpu")  # on a GPU run too: this is the CPU's rule
    engine = TransformersEngine(cpu, "vlm", UsageMeter())
    spy = GenerateSpy(engine.model)
    monkeypatch.setattr(engine.model, "generate", spy)
    engine.generate([LMRequest(f"text {i}") for i in range(AUTO_CPU_BATCH + 1)])
    assert [inputs["input_ids"].shape[0] for inputs, _ in spy.calls] == [AUTO_CPU_BATCH, 1]


def test_auto_batch_size_fits_the_memory_measured_for_the_3b_shape(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 12 measured a 3B-shaped model at 1,513 prompt + 128 new tokens: batch 64 took 11.3 GB
    above the weights, batch 256 46 GB. The estimate must stay under that and not far below."""
    from types import SimpleNamespace

    from videomem.models.hf_transformers import AUTO_MAX_BATCH, AUTO_MEMORY_SHARE, auto_batch_size
    from random_weights import SHAPES

    text = SHAPES["3b"]["text"]
    model = SimpleNamespace(
        device=torch.device("cuda", 0), dtype=torch.bfloat16,
        config=SimpleNamespace(text_config=SimpleNamespace(**{k: v for k, v in text.items() if k != "mrope_section"})),
    )
    free = {"bytes": 11.3e9 / AUTO_MEMORY_SHARE}
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda device: (free["bytes"], 80e9))
    monkeypatch.setattr(torch.cuda, "memory_reserved", lambda device: 0)
    monkeypatch.setattr(torch.cuda, "memory_allocated", lambda device: 0)
    assert 40 <= auto_batch_size(model, 1513, 128) <= 64
    free["bytes"] = 46e9 / AUTO_MEMORY_SHARE
    assert 180 <= auto_batch_size(model, 1513, 128) <= 256
    assert auto_batch_size(model, 4 * 1513, 128) < auto_batch_size(model, 1513, 128), "longer prompts, smaller batches"
    free["bytes"] = 1e12
    assert auto_batch_size(model, 1513, 128) == AUTO_MAX_BATCH


def test_auto_batch_size_counts_memory_the_allocator_holds_cached(monkeypatch: pytest.MonkeyPatch) -> None:
    """After the first batch PyTorch keeps its activations cached: free to the process though the
    driver reports them used. No GPU here, so the CUDA memory queries are stand-ins."""
    from types import SimpleNamespace

    from videomem.models.hf_transformers import auto_batch_size
    from random_weights import SHAPES

    text = SHAPES["3b"]["text"]
    model = SimpleNamespace(
        device=torch.device("cuda", 0), dtype=torch.bfloat16,
        config=SimpleNamespace(text_config=SimpleNamespace(**{k: v for k, v in text.items() if k != "mrope_section"})),
    )
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda device: (14e9, 80e9))
    monkeypatch.setattr(torch.cuda, "memory_allocated", lambda device: 8e9)
    monkeypatch.setattr(torch.cuda, "memory_reserved", lambda device: 8e9)
    first = auto_batch_size(model, 1513, 128)
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda device: (2e9, 80e9))
    monkeypatch.setattr(torch.cuda, "memory_reserved", lambda device: 20e9)  # 12 GB cached by the first batch
    assert auto_batch_size(model, 1513, 128) == first


def test_a_templated_prompt_gets_no_second_bos(tiny_qwen2_5: Path) -> None:
    """The chat template writes the special tokens itself; a tokenizer that also adds a BOS
    (Llama- and Gemma-style ones do) must not put a second one before it."""
    engine = TransformersEngine(role(tiny_qwen2_5), "vlm", UsageMeter())
    tokenizer = engine.tokenizer
    tokenizer.bos_token = tokenizer.eos_token
    tokenizer.add_bos_token = True
    assert tokenizer("hi")["input_ids"][0] == tokenizer.bos_token_id, "this tokenizer now adds a BOS"
    for request in (LMRequest("Say hello."), VLRequest("Describe.", frames(1))):
        ids = engine._inputs([request])["input_ids"][0].tolist()
        text = engine.processor.apply_chat_template(engine._messages(request), add_generation_prompt=True, tokenize=False)
        assert ids[0] != tokenizer.bos_token_id and ids[-3:] == tokenizer(text, add_special_tokens=False)["input_ids"][-3:]
