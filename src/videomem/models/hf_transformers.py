"""The `transformers` backend: local Hugging Face models, batched `generate` with left padding.

`options.kind` picks the model class: "vlm" (AutoProcessor + AutoModelForImageTextToText:
Qwen2.5-VL, Qwen3-VL, SmolVLM, ...) or "llm" (AutoTokenizer + AutoModelForCausalLM). Without
it the vlm role loads a VLM and the llm role a text model. There is no constrained decoding
here, so the JSON schema is appended to the prompt and `prompted.py` repairs what comes back.

For GPU throughput: images are preprocessed by the (default) torchvision image processors on
the model's device (not one CPU thread of PIL); requests are sorted by length before they are cut into
batches, so a batch pads little; attention is SDPA (flash-attention 2 when installed on CUDA;
`options.attn_implementation` overrides); `batch_size: auto` takes the largest batch whose KV
cache and activations fit in free GPU memory (`auto_batch_size`; on the CPU it is
AUTO_CPU_BATCH). A stage hands over a whole window of clips at once (`batching`), so sorting
and large batches have something to work with. `options.generate` is passed to
`model.generate` as is, e.g. `{cache_implementation: static}`: a static KV cache, which
transformers compiles on CUDA, instead of the dynamic one that concatenates every step.

Roles that name the same model, kind, dtype and device share one loaded copy.
"""

from __future__ import annotations

import importlib.util
import math
import time
from collections.abc import Sequence
from functools import cache
from typing import Any, Literal

import torch

from videomem.config import RoleConfig
from videomem.errors import ModelError
from videomem.models.engines import Batching, Generation, LMRequest, VLRequest
from videomem.models.usage import Usage, UsageMeter
from videomem.models.oneline import one_line
from videomem.models.templates import with_schema

Kind = Literal["vlm", "llm"]

AUTO_CPU_BATCH = 8
"""`batch_size: auto` without CUDA: there is no GPU memory to size the batch by."""
AUTO_MAX_BATCH = 256
"""`batch_size: auto` never goes above this (decode gains flatten long before)."""
AUTO_MEMORY_SHARE = 0.8
"""Share of free GPU memory `batch_size: auto` plans to fill (the rest absorbs fragmentation)."""
ACTIVATION_FACTOR = 4
"""Prefill activations per prompt token, in units of (hidden + intermediate size) values: the
MLP's gate/up/down outputs and the attention projections live at once during a layer."""
WINDOW = 256
"""Clips a stage hands over at once (`batching`): sorted by length, then cut into batches."""


def attention_implementation(options: dict[str, Any], device: str) -> str:
    """`options.attn_implementation`, else flash-attention 2 where installed on CUDA, else SDPA."""
    if "attn_implementation" in options:
        return str(options["attn_implementation"])
    if device.startswith("cuda") and importlib.util.find_spec("flash_attn") is not None:
        return "flash_attention_2"
    return "sdpa"


def _text_config(model: Any) -> Any:
    config = model.config
    return getattr(config, "text_config", None) or config


def auto_batch_size(model: Any, prompt_tokens: int, new_tokens: int) -> int:
    """The largest batch of sequences this long that fits in AUTO_MEMORY_SHARE of the free
    memory of the model's GPU: each row holds its KV cache for prompt and completion, and the
    prefill's activations for its prompt. Free counts what PyTorch's allocator holds cached but
    unused (the previous batch's), or the batch would shrink after the first one. AUTO_CPU_BATCH
    off CUDA."""
    device = model.device
    if device.type != "cuda":
        return AUTO_CPU_BATCH
    free, _ = torch.cuda.mem_get_info(device)
    free += torch.cuda.memory_reserved(device) - torch.cuda.memory_allocated(device)
    text = _text_config(model)
    heads = text.num_attention_heads
    head_dim = getattr(text, "head_dim", None) or text.hidden_size // heads
    kv_heads = getattr(text, "num_key_value_heads", None) or heads
    width = model.dtype.itemsize
    kv = 2 * text.num_hidden_layers * kv_heads * head_dim * width * (prompt_tokens + new_tokens)
    activations = ACTIVATION_FACTOR * (text.hidden_size + text.intermediate_size) * width * prompt_tokens
    return max(1, min(AUTO_MAX_BATCH, math.floor(free * AUTO_MEMORY_SHARE / (kv + activations))))


def _torch_dtype(name: str | None) -> torch.dtype | str:
    if name in (None, "auto"):
        return "auto"
    dtype = getattr(torch, str(name), None)
    if not isinstance(dtype, torch.dtype):
        raise ModelError(f"dtype {name!r} is not a torch dtype (use auto, bfloat16, float16 or float32)")
    return dtype


@cache
def _load(model_id: str, kind: Kind, dtype_name: str | None, device: str, attention: str) -> tuple[Any, Any]:
    """(processor or tokenizer, model) in eval mode on `device`."""
    from transformers import (
        AutoModelForCausalLM,
        AutoModelForImageTextToText,
        AutoProcessor,
        AutoTokenizer,
    )

    dtype = _torch_dtype(dtype_name)
    if kind == "vlm":
        processor = AutoProcessor.from_pretrained(model_id)
        processor.tokenizer.padding_side = "left"
        model = AutoModelForImageTextToText.from_pretrained(model_id, dtype=dtype, attn_implementation=attention)
    else:
        processor = AutoTokenizer.from_pretrained(model_id, padding_side="left")
        if processor.pad_token is None:
            processor.pad_token = processor.eos_token
        model = AutoModelForCausalLM.from_pretrained(model_id, dtype=dtype, attn_implementation=attention)
    return processor, model.to(device).eval()


class TransformersEngine:
    """VisionLanguageModel and LanguageModel on a local transformers model."""

    def __init__(self, cfg: RoleConfig, role: str, meter: UsageMeter) -> None:
        self.cfg = cfg
        self.role = role
        self.meter = meter
        kind = cfg.options.get("kind", "vlm" if role == "vlm" else "llm")
        if kind not in ("vlm", "llm"):
            raise ModelError(f"{role}: options.kind must be 'vlm' or 'llm' (got {kind!r})")
        self.kind: Kind = kind
        device = cfg.device or ("cuda" if torch.cuda.is_available() else "cpu")
        try:
            attention = attention_implementation(cfg.options, device)
            self.processor, self.model = _load(str(cfg.model), self.kind, cfg.dtype, device, attention)
        except (OSError, ValueError) as err:
            raise ModelError(f"{role}: transformers cannot load {cfg.model!r} as a {kind}: {one_line(err)}") from None
        self.tokenizer = self.processor.tokenizer if self.kind == "vlm" else self.processor
        if not getattr(self.processor, "chat_template", None):
            raise ModelError(f"{role}: {cfg.model!r} has no chat template; use an instruction-tuned (chat) model")

    def _messages(self, request: VLRequest | LMRequest) -> list[dict[str, Any]]:
        prompt = with_schema(request.prompt, request.json_schema)
        images = getattr(request, "images", None) or []
        if self.kind == "vlm":
            content: Any = [*({"type": "image"} for _ in images), {"type": "text", "text": prompt}]
            system: Any = [{"type": "text", "text": request.system}]
        else:
            if images:
                raise ModelError(
                    f"{self.role}: {self.cfg.model!r} is a text model (options.kind llm) and cannot see images"
                )
            content, system = prompt, request.system
        messages = [{"role": "system", "content": system}] if request.system else []
        messages.append({"role": "user", "content": content})
        return messages

    def _inputs(self, batch: Sequence[VLRequest | LMRequest]) -> Any:
        """Tokenised, left-padded batch (with pixel values when there are images)."""
        texts = [
            self.processor.apply_chat_template(self._messages(request), add_generation_prompt=True, tokenize=False)
            for request in batch
        ]
        if self.kind == "llm":
            return self.processor(texts, return_tensors="pt", padding=True, add_special_tokens=False)
        images = [list(getattr(request, "images", None) or []) for request in batch]
        # The chat template already wrote the special tokens: adding them again would put a
        # second BOS before the prompt.
        if not any(images):
            return self.processor(text=texts, return_tensors="pt", padding=True, add_special_tokens=False)
        return self.processor(
            text=texts, images=images, return_tensors="pt", padding=True, add_special_tokens=False,
            device=self.model.device,
        )

    def _completion_lengths(self, generated: torch.Tensor) -> tuple[list[int], list[bool]]:
        """Tokens each row really produced (up to and including its first end-of-sequence
        token), and whether it ended by itself (False: the token budget cut it)."""
        eos = self.model.generation_config.eos_token_id
        eos_ids = torch.tensor(eos if isinstance(eos, list) else [eos] if eos is not None else [], dtype=torch.long)
        lengths, ended = [], []
        for row in generated:
            hits = torch.isin(row, eos_ids).nonzero()
            lengths.append(int(hits[0]) + 1 if len(hits) else len(row))
            ended.append(bool(len(hits)))
        return lengths, ended

    def batching(self, batch_size: int) -> Batching:
        """A whole window at once: this engine sorts it by length and cuts its own batches."""
        return Batching(max(batch_size, WINDOW))

    def _batch_size(self, longest: VLRequest | LMRequest) -> int:
        if self.cfg.batch_size != "auto":
            return self.cfg.batch_size
        prompt_tokens = int(self._inputs([longest])["input_ids"].shape[1])
        return auto_batch_size(self.model, prompt_tokens, longest.max_tokens or self.cfg.max_tokens)

    def generate(self, requests: Sequence[VLRequest | LMRequest]) -> list[Generation]:
        """Requests sorted longest first (images, then prompt length), cut into batches, and
        their generations put back in request order."""
        order = sorted(range(len(requests)), key=lambda i: _length(requests[i]), reverse=True)
        generations: dict[int, Generation] = {}
        start = 0
        while start < len(order):
            size = self._batch_size(requests[order[start]])
            chunk = order[start : start + size]
            generations.update(zip(chunk, self._generate_batch([requests[i] for i in chunk])))
            start += size
        return [generations[i] for i in range(len(requests))]

    def _generate_batch(self, batch: Sequence[VLRequest | LMRequest]) -> list[Generation]:
        started = time.perf_counter()
        inputs = self._inputs(batch).to(self.model.device)
        temperature = self.cfg.temperature or 0.0
        sampling: dict[str, Any] = {"do_sample": temperature > 0}
        if temperature > 0:
            sampling["temperature"] = temperature
        budget = max(request.max_tokens or self.cfg.max_tokens for request in batch)
        extra = dict(self.cfg.options.get("generate", {}))
        with torch.inference_mode():
            output = self.model.generate(
                **inputs, max_new_tokens=budget, pad_token_id=self.tokenizer.pad_token_id, **sampling, **extra
            )
        generated = output[:, inputs["input_ids"].shape[1] :].cpu()
        lengths, ended = self._completion_lengths(generated)
        texts = self.tokenizer.batch_decode([row[:n] for row, n in zip(generated, lengths)], skip_special_tokens=True)
        share = (time.perf_counter() - started) / len(batch)
        prompt_lengths = inputs["attention_mask"].sum(dim=1).tolist()
        generations = []
        for text, prompt_tokens, completion_tokens, stopped in zip(texts, prompt_lengths, lengths, ended):
            usage = Usage(int(prompt_tokens), completion_tokens, share, 1)
            self.meter.add(self.role, usage)
            generations.append(Generation(text=text.strip(), usage=usage, finish_reason="stop" if stopped else "length"))
        return generations


def _length(request: VLRequest | LMRequest) -> tuple[int, int]:
    """Sort key for batching: images dominate a VLM prompt's length, then the text."""
    return len(getattr(request, "images", None) or []), len(request.prompt)
