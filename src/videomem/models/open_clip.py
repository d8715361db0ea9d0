"""The `open_clip` visual embedder: CLIP / SigLIP images and texts in one embedding space.

It backs visual memory: a segment's frames are embedded once, and a text query finds them by
inner product. `model` is an open_clip architecture ("ViT-B-32-quickgelu",
"ViT-SO400M-14-SigLIP") with `pretrained` a tag ("openai", "webli") or a local weights file, or
a model that carries its own config and weights ("hf-hub:timm/ViT-B-16-SigLIP",
"local-dir:/path/to/folder"), which needs no `pretrained`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np
import torch
from PIL.Image import Image

from videomem.config import RoleConfig
from videomem.errors import ModelError
from videomem.models.usage import Usage, UsageMeter
from videomem.models.oneline import one_line


SELF_CONTAINED = ("hf-hub:", "local-dir:")
"""Model names that bring their own weights (open_clip ignores `pretrained` for them)."""


class OpenClipEmbedder:
    """VisualEmbedder: L2-normalised float32 rows for images and for texts."""

    def __init__(self, cfg: RoleConfig, role: str, meter: UsageMeter) -> None:
        import open_clip

        if not cfg.pretrained and not str(cfg.model).startswith(SELF_CONTAINED):
            raise ModelError(
                f"{role}: open_clip needs 'pretrained' (a tag such as 'openai' or a weights file) unless the "
                f"model is {' or '.join(SELF_CONTAINED)}...; without it the weights would be random"
            )
        self.cfg = cfg
        self.role = role
        self.meter = meter
        self.device = torch.device(cfg.device or ("cuda" if torch.cuda.is_available() else "cpu"))
        try:
            model, _, self.preprocess = open_clip.create_model_and_transforms(
                str(cfg.model), pretrained=cfg.pretrained or None, device=self.device
            )
            self.tokenizer = open_clip.get_tokenizer(str(cfg.model))
        except (RuntimeError, OSError, ValueError) as err:
            reason = one_line(err)
            raise ModelError(f"{role}: open_clip cannot load {cfg.model!r} / {cfg.pretrained!r}: {reason}") from None
        self.model = model.eval()
        self.dim: int = int(self.embed_texts(["probe"]).shape[1])

    def _record(self, started: float, calls: int) -> None:
        self.meter.add(self.role, Usage(seconds=time.perf_counter() - started, calls=calls))

    @staticmethod
    def _normalised(features: torch.Tensor) -> np.ndarray:
        features = torch.nn.functional.normalize(features.float(), dim=-1)
        return features.cpu().numpy().astype(np.float32)

    def embed_images(self, images: Sequence[Image]) -> np.ndarray:
        started = time.perf_counter()
        rows = []
        with torch.inference_mode():
            for start in range(0, len(images), self.cfg.batch_size):
                chunk = images[start : start + self.cfg.batch_size]
                batch = torch.stack([self.preprocess(image.convert("RGB")) for image in chunk])
                rows.append(self._normalised(self.model.encode_image(batch.to(self.device))))
        self._record(started, len(rows))
        return np.concatenate(rows) if rows else np.zeros((0, self.dim), dtype=np.float32)

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        started = time.perf_counter()
        rows = []
        with torch.inference_mode():
            for start in range(0, len(texts), self.cfg.batch_size):
                tokens = self.tokenizer(list(texts[start : start + self.cfg.batch_size]))
                rows.append(self._normalised(self.model.encode_text(tokens.to(self.device))))
        self._record(started, len(rows))
        return np.concatenate(rows) if rows else np.zeros((0, self.dim), dtype=np.float32)
