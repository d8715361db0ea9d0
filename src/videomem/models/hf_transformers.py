"""The `transformers` backend: local Hugging Face models, batched `generate` with left padding.

`options.kind` picks the model class: "vlm" (AutoProcessor + AutoModelForImageTextToText:
Qwen2.5-VL, Qwen3-VL, SmolVLM, ...) or "llm" (AutoTokenizer + AutoModelForCausalLM). Without
it the vlm role loads a VLM and the llm role a text model. There is no constrained decoding
here, so the JSON schema is appended to the prompt and `prompted.py` repairs what comes back.

Roles that name the same model, kind, dtype and device share one loaded copy.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from functools import cache
from typing import Any, Literal

import torch

from videomem.config import RoleConfig
from videomem.errors import ModelError
from videomem.models.base import Generation, LMRequest, Usage, UsageMeter, VLRequest
from videomem.models.oneline import one_line
from videomem.models.templates import with_schema

Kind = Literal["vlm", "llm"]


def _torch_dtype(name: str | None) -> torch.dtype | str:
    if name in (None, "auto"):
        return "auto"
    dtype = getattr(torch, str(name), None)
    if not isinstance(dtype, torch.dtype):
        raise ModelError(f"dtype {name!r} is not a torch dtype (use auto, bfloat16, float16 or float32)")
    return dtype


@cache
def _load(model_id: str, kind: Kind, dtype_name: str | None, device: str) -> tuple[Any, Any]:
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
        model = AutoModelForImageTextToText.from_pretrained(model_id, dtype=dtype)
    else:
        processor = AutoTokenizer.from_pretrained(model_id, padding_side="left")
        if processor.pad_token is None:
            processor.pad_token = processor.eos_token
        model = AutoModelForCausalLM.from_pretrained(model_id, dtype=dtype)
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
            self.processor, self.model = _load(str(cfg.model), self.kind, cfg.dtype, device)
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
        return self.processor(
            text=texts, images=images if any(images) else None, return_tensors="pt", padding=True
        )

    def _completion_lengths(self, generated: torch.Tensor) -> list[int]:
        """Tokens each row really produced: up to and including its first end-of-sequence token."""
        eos = self.model.generation_config.eos_token_id
        eos_ids = torch.tensor(eos if isinstance(eos, list) else [eos] if eos is not None else [], dtype=torch.long)
        lengths = []
        for row in generated:
            hits = torch.isin(row, eos_ids).nonzero()
            lengths.append(int(hits[0]) + 1 if len(hits) else len(row))
        return lengths

    def generate(self, requests: Sequence[VLRequest | LMRequest]) -> list[Generation]:
        generations: list[Generation] = []
        for start in range(0, len(requests), self.cfg.batch_size):
            batch = requests[start : start + self.cfg.batch_size]
            started = time.perf_counter()
            inputs = self._inputs(batch).to(self.model.device)
            sampling: dict[str, Any] = {"do_sample": self.cfg.temperature > 0}
            if self.cfg.temperature > 0:
                sampling["temperature"] = self.cfg.temperature
            with torch.inference_mode():
                output = self.model.generate(
                    **inputs,
                    max_new_tokens=max(request.max_tokens or self.cfg.max_tokens for request in batch),
                    pad_token_id=self.tokenizer.pad_token_id,
                    **sampling,
                )
            generated = output[:, inputs["input_ids"].shape[1] :].cpu()
            lengths = self._completion_lengths(generated)
            texts = self.tokenizer.batch_decode(
                [row[:n] for row, n in zip(generated, lengths)], skip_special_tokens=True
            )
            share = (time.perf_counter() - started) / len(batch)
            prompt_lengths = inputs["attention_mask"].sum(dim=1).tolist()
            for text, prompt_tokens, completion_tokens in zip(texts, prompt_lengths, lengths):
                usage = Usage(int(prompt_tokens), completion_tokens, share, 1)
                self.meter.add(self.role, usage)
                generations.append(Generation(text=text.strip(), usage=usage))
        return generations
