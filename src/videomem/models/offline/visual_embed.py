"""The offline visual embedder: each frame described in words from its own offline features,
the words embedded with MiniLM.

CLIP and SigLIP map images and texts into one learned space; no such model ships inside a PyPI
package, so the offline profile builds the shared space out of text. A frame's facts from the
offline detectors — on-screen text (OCR), flat coloured shapes, the palette colours covering
it, how many people HOG finds, EfficientNet's ImageNet tags — are written as the offline
captioner writes a one-frame clip, and both that description and a query are embedded by the
same MiniLM. It finds what the detectors can name (a word on a sign, a red box, two people, a
mostly green scene) and nothing else, so it is much weaker than CLIP or SigLIP.

The detectors are the offline vision tasks' own (one `SceneAnalyser`, shared through the
`ModelSet`): frames the caption stage analysed are described from its cache, not analysed again.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np
from PIL.Image import Image

from videomem.config import RoleConfig
from videomem.core import ClipView
from videomem.models.engines import TextEmbedder
from videomem.models.usage import Usage, UsageMeter
from videomem.models.offline import require_no_options
from videomem.models.offline.scene import SceneAnalyser
from videomem.models.offline.vision import caption

ROLE = "visual_embedder"


class OfflineVisualEmbedder:
    """VisualEmbedder: MiniLM rows for frame descriptions (images) and for texts. The meter
    records the seconds spent describing frames under this role; MiniLM's own time is metered
    under `text_embedder`, so nothing is counted twice."""

    def __init__(self, cfg: RoleConfig, meter: UsageMeter, text_embedder: TextEmbedder, scene: SceneAnalyser) -> None:
        require_no_options(cfg, ROLE)
        self.cfg = cfg
        self.meter = meter
        self.text_embedder = text_embedder
        self.scene = scene
        self.dim: int = text_embedder.dim

    def describe(self, images: Sequence[Image]) -> list[str]:
        """Each image as the offline captioner describes a clip of that one frame."""
        start = time.perf_counter()
        views = [ClipView(video_id="", t_start=0.0, t_end=0.0, frames=[image], frame_times=[0.0]) for image in images]
        descriptions = [caption(facts) for facts in self.scene.analyse(views)]
        self.meter.add(ROLE, Usage(seconds=time.perf_counter() - start, calls=1))
        return descriptions

    def embed_images(self, images: Sequence[Image]) -> np.ndarray:
        """Each distinct description is embedded once: the frames of a still scene read alike."""
        if not images:
            return np.zeros((0, self.dim), dtype=np.float32)
        descriptions = self.describe(images)
        distinct = list(dict.fromkeys(descriptions))
        vectors = self.text_embedder.embed(distinct)
        row = {text: i for i, text in enumerate(distinct)}
        return vectors[[row[d] for d in descriptions]]

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return self.text_embedder.embed(list(texts))
