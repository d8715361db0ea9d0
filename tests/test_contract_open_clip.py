"""Contract: the open_clip visual embedder on a tiny `-quickgelu` CLIP loaded by path.

OpenAI's CLIP weights were trained with QuickGELU, and open_clip builds that activation only for
the `-quickgelu` configs (plain `ViT-B-32` has been GELU since open_clip 2.32, with only a
warning). The tiny architecture is registered with open_clip the way a user adds a config, its
random weights saved to a file and named as `pretrained`; the visual stage records which
embedder built the index, so vectors of another one are never mixed in.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import make_video
from PIL import Image
from tiny_models import TINY_CLIP, TINY_CLIP_ARCH, build_tiny_clip

from videomem.config import PipelineConfig, RoleConfig, load_models
from videomem.models.usage import UsageMeter
from videomem.models.open_clip import OpenClipEmbedder
from videomem.models.registry import ModelSet
from videomem.pipeline.runner import ingest
from videomem.store import Store

QUICK = f"{TINY_CLIP_ARCH}-quickgelu"


@pytest.fixture(scope="module")
def quick_weights(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("contract-clip")
    build_tiny_clip(directory, seed=0)  # registers the plain-GELU twin as well
    return build_tiny_clip(directory, seed=0, quick_gelu=True)


def role(model: str, weights: Path) -> RoleConfig:
    return RoleConfig(backend="open_clip", model=model, pretrained=str(weights), device="cpu", batch_size=4)


def test_quickgelu_weights_load_by_path_into_a_quickgelu_model(quick_weights: Path) -> None:
    from open_clip.transformer import QuickGELU

    embedder = OpenClipEmbedder(role(QUICK, quick_weights), "visual_embedder", UsageMeter())
    activations = {type(m) for m in embedder.model.modules() if isinstance(m, (QuickGELU, torch.nn.GELU))}
    assert activations == {QuickGELU}, "both towers use QuickGELU"
    saved = torch.load(quick_weights, map_location="cpu")
    loaded = embedder.model.state_dict()
    assert all(torch.equal(loaded[name], tensor) for name, tensor in saved.items()), "the file's weights, not random"
    assert embedder.dim == TINY_CLIP["embed_dim"]

    frames = [Image.new("RGB", (48, 36), (200, 40 * i, 90)) for i in range(3)]
    plain = OpenClipEmbedder(role(TINY_CLIP_ARCH, quick_weights), "visual_embedder", UsageMeter())
    assert not np.allclose(embedder.embed_images(frames), plain.embed_images(frames), atol=1e-4), (
        "the activation changes the embedding: the same weights under the other config are another space"
    )


def test_the_visual_stage_records_the_quickgelu_embedder_identity(quick_weights: Path, tmp_path: Path) -> None:
    video = make_video(tmp_path / "clip.mp4", seconds=12, fps=5)
    cfg = load_models().model_copy(update={"visual_embedder": role(QUICK, quick_weights)})
    models = ModelSet(cfg)
    store = Store(tmp_path / "store", create=True)
    pipeline = PipelineConfig(clip_seconds=10, frames_per_clip=2, stages=("sample", "visual"))

    report = ingest([video], store, pipeline, lambda: models, show_progress=False)

    assert report.ok, report.all_failures()
    rows = store.query("SELECT embedder, vector FROM visual_segments ORDER BY t_start")
    assert len(rows) == 2
    assert {r["embedder"] for r in rows} == {f"open_clip:{QUICK}@{quick_weights}:{TINY_CLIP['embed_dim']}"}
    assert all(np.isclose(np.linalg.norm(np.frombuffer(r["vector"], np.float32)), 1.0, atol=1e-5) for r in rows)
