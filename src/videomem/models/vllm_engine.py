"""The `vllm` backend: an in-process `vllm.LLM`, the fast path for batch ingestion on GPUs.

A whole batch goes to one `llm.chat` call, so vLLM schedules it with continuous batching; a
stage hands over `options.window` clips at once (`batching`, default WINDOW), so the engine sees a
stage's pending requests together and the store commits each clip when its window returns.
JSON schemas become structured-output constraints, so replies parse on the first try. vLLM is
imported only when this backend is built; the request building below is plain Python so it
is tested without a GPU and without vLLM installed.

Roles that name the same model share one engine (one copy of the weights on the GPU).
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from functools import cache
from typing import Any

from videomem.config import RoleConfig
from videomem.errors import ModelError
from videomem.models.engines import Batching, Generation, LMRequest, VLRequest
from videomem.models.usage import Usage, UsageMeter

WINDOW = 512
"""Clips per `llm.chat` call from a stage: enough for the scheduler to fill a GPU's KV cache;
a killed ingest loses at most this many clips' work."""
DEFAULT_ENGINE_ARGS: dict[str, Any] = {"max_model_len": 32768}
"""Qwen-VL context sizes; override with `options.engine_args`."""
DEFAULT_IMAGES = 16
"""Images per prompt when the role sets no `max_images`: room for answer_from_frames within
Qwen-VL context sizes."""


def chat_messages(request: VLRequest | LMRequest) -> list[dict[str, Any]]:
    """One request as vLLM chat messages; frames go in as PIL images (no JPEG round trip)."""
    images = getattr(request, "images", None) or []
    content: str | list[dict[str, Any]]
    if images:
        content = [{"type": "image_pil", "image_pil": image} for image in images]
        content.append({"type": "text", "text": request.prompt})
    else:
        content = request.prompt
    messages = [{"role": "system", "content": request.system}] if request.system else []
    messages.append({"role": "user", "content": content})
    return messages


def sampling_kwargs(request: VLRequest | LMRequest, cfg: RoleConfig) -> dict[str, Any]:
    """Arguments of `SamplingParams` for one request, without the JSON constraint object."""
    return {"max_tokens": request.max_tokens or cfg.max_tokens, "temperature": cfg.temperature or 0.0}


def engine_args(cfg: RoleConfig) -> dict[str, Any]:
    """Arguments of `vllm.LLM` for a profile role. The per-prompt image limit is the role's
    `max_images` (what the tools send at most); no memory is reserved for video inputs, which
    are never sent."""
    limit = {"image": cfg.max_images or DEFAULT_IMAGES, "video": 0}
    args = {"model": cfg.model, "dtype": cfg.dtype or "auto", **DEFAULT_ENGINE_ARGS, "limit_mm_per_prompt": limit}
    return args | cfg.options.get("engine_args", {})


def window(cfg: RoleConfig) -> int:
    """Clips a stage hands the engine at once: `options.window`, else WINDOW."""
    return int(cfg.options.get("window", WINDOW))


def image_limit(cfg: RoleConfig) -> int:
    """The most images the engine accepts in one prompt."""
    return int(engine_args(cfg)["limit_mm_per_prompt"].get("image", DEFAULT_IMAGES))


def _json_constraint(schema: dict[str, Any]) -> dict[str, Any]:
    """vLLM ≥ 0.11 names it StructuredOutputsParams; older releases GuidedDecodingParams."""
    try:
        from vllm.sampling_params import StructuredOutputsParams
    except ImportError:
        from vllm.sampling_params import GuidedDecodingParams

        return {"guided_decoding": GuidedDecodingParams(json=schema)}
    return {"structured_outputs": StructuredOutputsParams(json=schema)}


@cache
def _shared_llm(args_json: str) -> Any:
    from vllm import LLM

    return LLM(**json.loads(args_json))


class VLLMEngine:
    """VisionLanguageModel and LanguageModel on an in-process vLLM engine."""

    def __init__(self, cfg: RoleConfig, role: str, meter: UsageMeter) -> None:
        try:
            import vllm  # noqa: F401
        except ImportError:
            raise ModelError(
                f"{role}: the vllm backend needs vLLM: pip install 'videomem[vllm]' on a GPU machine"
            ) from None
        self.cfg = cfg
        self.role = role
        self.meter = meter
        self.llm = _shared_llm(json.dumps(engine_args(cfg), sort_keys=True))

    def batching(self, batch_size: int) -> Batching:
        return Batching(max(batch_size, window(self.cfg)))

    def generate(self, requests: Sequence[VLRequest | LMRequest]) -> list[Generation]:
        if not requests:
            return []
        from vllm import SamplingParams

        params = [
            SamplingParams(
                **sampling_kwargs(request, self.cfg),
                **(_json_constraint(request.json_schema) if request.json_schema else {}),
            )
            for request in requests
        ]
        started = time.perf_counter()
        outputs = self.llm.chat([chat_messages(r) for r in requests], sampling_params=params, use_tqdm=False)
        share = (time.perf_counter() - started) / len(requests)
        generations = []
        for output in outputs:
            completion = output.outputs[0]
            usage = Usage(len(output.prompt_token_ids or []), len(completion.token_ids), share, 1)
            self.meter.add(self.role, usage)
            generations.append(Generation(text=completion.text, usage=usage, finish_reason=completion.finish_reason))
        return generations
