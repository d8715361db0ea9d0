"""The open_clip visual embedder on a tiny CLIP with random weights saved to a local file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image
from tiny_models import TINY_CLIP, TINY_CLIP_ARCH, build_tiny_clip

from videomem.config import RoleConfig
from videomem.errors import ModelError
from videomem.models.usage import UsageMeter
from videomem.models.open_clip import OpenClipEmbedder

ARCH = TINY_CLIP_ARCH


@pytest.fixture(scope="module")
def weights(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    directory = tmp_path_factory.mktemp("open_clip")
    return build_tiny_clip(directory, seed=0), build_tiny_clip(directory, seed=1)


def role(pretrained: str | None, **overrides: Any) -> RoleConfig:
    fields = {"backend": "open_clip", "model": ARCH, "pretrained": pretrained, "device": "cpu", "batch_size": 8}
    return RoleConfig.model_validate(fields | overrides)


def images() -> list[Image.Image]:
    rng = np.random.default_rng(7)
    return [Image.fromarray(rng.integers(0, 255, (40, 50, 3), dtype=np.uint8)) for _ in range(3)]


def test_images_and_texts_share_one_normalised_space(weights: tuple[Path, Path]) -> None:
    meter = UsageMeter()
    embedder = OpenClipEmbedder(role(str(weights[0])), "visual_embedder", meter)
    image_vectors = embedder.embed_images(images())
    text_vectors = embedder.embed_texts(["a red car", "two people walking", "a sign reading EXIT"])
    assert embedder.dim == TINY_CLIP["embed_dim"]
    assert image_vectors.shape == (3, embedder.dim) and text_vectors.shape == (3, embedder.dim)
    for vectors in (image_vectors, text_vectors):
        assert vectors.dtype == np.float32
        assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert not np.allclose(image_vectors[0], image_vectors[1]), "different images, different vectors"
    assert (text_vectors @ image_vectors.T).shape == (3, 3)
    assert meter.by_role()["visual_embedder"].calls >= 2


def test_weights_come_from_the_file_and_results_are_deterministic(weights: tuple[Path, Path]) -> None:
    first = OpenClipEmbedder(role(str(weights[0])), "visual_embedder", UsageMeter())
    again = OpenClipEmbedder(role(str(weights[0]), batch_size=2), "visual_embedder", UsageMeter())
    other = OpenClipEmbedder(role(str(weights[1])), "visual_embedder", UsageMeter())
    frames = images()
    reference = first.embed_images(frames)
    assert np.array_equal(reference, first.embed_images(frames)), "same input, same output"
    assert np.allclose(reference, again.embed_images(frames), atol=1e-5), "batching does not change results"
    assert not np.allclose(reference, other.embed_images(frames), atol=1e-3), "other weights, other vectors"
    assert np.allclose(first.embed_texts(["a cat"]), again.embed_texts(["a cat"]), atol=1e-5)
    assert first.embed_images([]).shape == (0, first.dim)


def test_pretrained_is_required_and_load_errors_are_model_errors(weights: tuple[Path, Path], tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="open_clip needs 'pretrained'"):
        OpenClipEmbedder(role(None), "visual_embedder", UsageMeter())
    with pytest.raises(ModelError, match="visual_embedder: open_clip cannot load 'no-such-arch'") as info:
        OpenClipEmbedder(role(str(weights[0]), model="no-such-arch"), "visual_embedder", UsageMeter())
    assert "\n" not in str(info.value)


def test_a_local_dir_model_needs_no_pretrained(weights: tuple[Path, Path], tmp_path: Path) -> None:
    """open_clip's local-dir: (and hf-hub:) names carry their config and weights; open_clip ignores
    `pretrained` for them, so the profile need not invent one."""
    import json
    import shutil

    folder = tmp_path / "tiny-local"
    folder.mkdir()
    (folder / "open_clip_config.json").write_text(json.dumps({"model_cfg": TINY_CLIP, "preprocess_cfg": {}}))
    shutil.copy(weights[0], folder / "open_clip_pytorch_model.bin")
    local = OpenClipEmbedder(role(None, model=f"local-dir:{folder}"), "visual_embedder", UsageMeter())
    named = OpenClipEmbedder(role(str(weights[0])), "visual_embedder", UsageMeter())
    assert np.allclose(local.embed_images(images()), named.embed_images(images()), atol=1e-5), "the folder's weights"
