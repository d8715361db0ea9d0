"""The vllm backend's request building, checked without a GPU and without vLLM installed."""

from __future__ import annotations

import sys
import types
from typing import Any

import pytest
from PIL import Image

from videomem.config import RoleConfig, default_path, load_models
from videomem.errors import ModelError
from videomem.models.engines import LMRequest, VLRequest
from videomem.models.tasks.captioning import CaptionOut
from videomem.models.usage import UsageMeter
from videomem.models.vllm_engine import VLLMEngine, _json_constraint, chat_messages, engine_args, sampling_kwargs


def test_frames_go_in_as_pil_images_before_the_text() -> None:
    frames = [Image.new("RGB", (8, 8), "red"), Image.new("RGB", (8, 8), "blue")]
    messages = chat_messages(VLRequest("Caption it.", frames, system="Be brief."))
    assert messages[0] == {"role": "system", "content": "Be brief."}
    parts = messages[1]["content"]
    assert [p["type"] for p in parts] == ["image_pil", "image_pil", "text"]
    assert parts[0]["image_pil"] is frames[0] and parts[1]["image_pil"] is frames[1]
    assert parts[2]["text"] == "Caption it."


def test_text_requests_are_plain_strings() -> None:
    assert chat_messages(LMRequest("Summarise.")) == [{"role": "user", "content": "Summarise."}]


def test_sampling_uses_request_tokens_or_the_profile_default() -> None:
    cfg = RoleConfig(backend="vllm", model="m", max_tokens=300, temperature=0.2)
    assert sampling_kwargs(LMRequest("x"), cfg) == {"max_tokens": 300, "temperature": 0.2}
    assert sampling_kwargs(LMRequest("x", max_tokens=40), cfg)["max_tokens"] == 40


def test_engine_args_merge_profile_options_over_defaults() -> None:
    profile = load_models(default_path("models", "vllm-inprocess-qwen3-vl-8b"))
    args = engine_args(profile.vlm)
    assert args["model"] == "Qwen/Qwen3-VL-8B-Instruct" and args["dtype"] == "bfloat16"
    assert args["gpu_memory_utilization"] == 0.8
    assert args["limit_mm_per_prompt"] == {"image": profile.vlm.max_images, "video": 0}, "no memory kept for video"
    assert engine_args(profile.llm) == args, "both roles map to one shared engine"
    assert engine_args(RoleConfig(backend="vllm", model="m"))["dtype"] == "auto"


def test_the_image_limit_is_the_vlm_max_images_and_the_shared_llm_follows(tmp_path) -> None:
    path = tmp_path / "eight.yaml"
    path.write_text(
        "vlm: {backend: vllm, model: q, max_images: 8}\nllm: {backend: vllm, model: q}\ntext_embedder: {backend: offline}\n"
    )
    profile = load_models(path)
    assert engine_args(profile.vlm)["limit_mm_per_prompt"] == {"image": 8, "video": 0}
    assert engine_args(profile.llm) == engine_args(profile.vlm), "one engine, not two copies of the weights"
    assert sampling_kwargs(LMRequest("x"), profile.llm)["temperature"] == 0.0, "greedy unless the profile says"


class _Params:
    def __init__(self, json: dict[str, Any]) -> None:
        self.json = json


def _fake_vllm(monkeypatch: pytest.MonkeyPatch, **classes: type) -> None:
    module = types.ModuleType("vllm.sampling_params")
    for name, cls in classes.items():
        setattr(module, name, cls)
    monkeypatch.setitem(sys.modules, "vllm", types.ModuleType("vllm"))
    monkeypatch.setitem(sys.modules, "vllm.sampling_params", module)


def test_json_constraint_prefers_structured_outputs(monkeypatch: pytest.MonkeyPatch) -> None:
    schema = CaptionOut.model_json_schema()
    _fake_vllm(monkeypatch, StructuredOutputsParams=_Params, GuidedDecodingParams=_Params)
    constraint = _json_constraint(schema)
    assert list(constraint) == ["structured_outputs"] and constraint["structured_outputs"].json == schema


def test_json_constraint_falls_back_to_guided_decoding(monkeypatch: pytest.MonkeyPatch) -> None:
    schema = CaptionOut.model_json_schema()
    _fake_vllm(monkeypatch, GuidedDecodingParams=_Params)
    constraint = _json_constraint(schema)
    assert list(constraint) == ["guided_decoding"] and constraint["guided_decoding"].json == schema


def test_missing_vllm_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "vllm", None)
    with pytest.raises(ModelError, match=r"vlm: the vllm backend needs vLLM: pip install 'videomem\[vllm\]'"):
        VLLMEngine(RoleConfig(backend="vllm", model="m"), "vlm", UsageMeter())


class _FakeLLM:
    """Stands in for vllm.LLM: records the chat batch, returns RequestOutput-shaped objects."""

    created: list[dict[str, Any]] = []

    def __init__(self, **args: Any) -> None:
        self.created.append(args)
        self.calls: list[tuple[list, list]] = []

    def reply(self, i: int) -> str:
        return f"reply {i}"

    def chat(self, conversations: list, sampling_params: list, use_tqdm: bool) -> list:
        self.calls.append((conversations, sampling_params))
        return [
            types.SimpleNamespace(
                prompt_token_ids=list(range(10 + i)),
                outputs=[types.SimpleNamespace(text=self.reply(i), token_ids=list(range(i + 1)), finish_reason="stop")],
            )
            for i in range(len(conversations))
        ]


class _FakeSamplingParams:
    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs


def test_one_chat_call_per_batch_with_token_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    from videomem.models import vllm_engine

    _fake_vllm(monkeypatch, StructuredOutputsParams=_Params)
    sys.modules["vllm"].LLM = _FakeLLM
    sys.modules["vllm"].SamplingParams = _FakeSamplingParams
    vllm_engine._shared_llm.cache_clear()
    _FakeLLM.created.clear()
    meter = UsageMeter()
    cfg = RoleConfig(backend="vllm", model="m", max_tokens=50)
    engine = VLLMEngine(cfg, "vlm", meter)
    assert VLLMEngine(cfg, "llm", meter).llm is engine.llm and len(_FakeLLM.created) == 1

    frame = Image.new("RGB", (8, 8))
    schema = CaptionOut.model_json_schema()
    generations = engine.generate([VLRequest("a", [frame], json_schema=schema), VLRequest("b", max_tokens=5)])
    vllm_engine._shared_llm.cache_clear()

    [(conversations, params)] = engine.llm.calls
    assert conversations == [chat_messages(VLRequest("a", [frame])), chat_messages(VLRequest("b"))]
    assert params[0].kwargs["structured_outputs"].json == schema and params[0].kwargs["max_tokens"] == 50
    assert "structured_outputs" not in params[1].kwargs and params[1].kwargs["max_tokens"] == 5
    assert [g.text for g in generations] == ["reply 0", "reply 1"]
    assert [(g.usage.prompt_tokens, g.usage.completion_tokens) for g in generations] == [(10, 1), (11, 2)]
    total = meter.by_role()["vlm"]
    assert (total.prompt_tokens, total.completion_tokens, total.calls) == (21, 3, 2)


class _CaptioningLLM(_FakeLLM):
    def reply(self, i: int) -> str:
        return f'{{"caption": "clip {i}"}}'


def test_a_stage_hands_its_pending_clips_to_the_engine_together(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    from kill_stage import ScriptedModels
    from memory_stores import hand_store

    from videomem.config import PipelineConfig
    from videomem.core import VideoSource
    from videomem.models import vllm_engine
    from videomem.models.prompted import PromptedVision
    from videomem.pipeline.base import StageContext
    from videomem.pipeline.caption import CaptionStage

    _fake_vllm(monkeypatch, StructuredOutputsParams=_Params)
    sys.modules["vllm"].LLM = _CaptioningLLM
    sys.modules["vllm"].SamplingParams = _FakeSamplingParams
    vllm_engine._shared_llm.cache_clear()
    cfg = RoleConfig(backend="vllm", model="m", options={"window": 6})
    engine = VLLMEngine(cfg, "vlm", UsageMeter())
    vllm_engine._shared_llm.cache_clear()
    store = hand_store(tmp_path, [None] * 8)
    ctx = StageContext(
        store, PipelineConfig(caption_batch_size=2), lambda: ScriptedModels(vision=PromptedVision(engine, cfg)),
        show_progress=False, stages=("caption",),
    )
    result = CaptionStage().run(ctx, [VideoSource(tmp_path / "v.mp4", "v")])
    assert result.done == 8
    assert [len(conversations) for conversations, _ in engine.llm.calls] == [6, 2], "windows, not caption batches"
    assert [r[0] for r in store.query("SELECT text FROM events ORDER BY t_start")][:2] == ["clip 0", "clip 1"]
