"""FAISS builds: search runs on a GPU copy when the installed faiss has GPU support (a stand-in
for GPU faiss here, which has no GPU), scoped searches stay on the CPU index, and packaging
never installs faiss-cpu and faiss-gpu side by side."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from types import SimpleNamespace

import faiss
import pytest
from kill_stage import HashEmbedder

from videomem.store import Store
from videomem.store import vectors

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    tomllib = pytest.importorskip("tomli")

REPO = Path(__file__).resolve().parents[1]
TEXTS = ["a red kettle on the stove", "a man repairs a bicycle", "two people cook pasta", "a dog sleeps"]


class _Counted:
    """A GPU copy stand-in: the CPU index, counting the searches that reach it."""

    def __init__(self, index) -> None:
        self.index, self.searches = index, 0

    def search(self, vector, k, **kwargs):
        if k > 2048:  # what faiss's GPU flat search does
            raise RuntimeError("Error: 'k > 0 && k <= GPU_MAX_SELECTION_K' failed: k must be <= 2048 for GPU")
        self.searches += 1
        return self.index.search(vector, k, **kwargs)


def _gpu_faiss(monkeypatch: pytest.MonkeyPatch, copies: list[_Counted]) -> None:
    """faiss as a GPU build would be (no GPU here: its copy is a stand-in over the CPU index)."""

    def to_gpu(resources, device, index):
        assert device == 0 and resources == "gpu resources"
        copies.append(_Counted(index))
        return copies[-1]

    gpu_faiss = SimpleNamespace(**{name: getattr(faiss, name) for name in dir(faiss) if not name.startswith("_")})
    gpu_faiss.StandardGpuResources = lambda: "gpu resources"
    gpu_faiss.get_num_gpus = lambda: 1
    gpu_faiss.index_cpu_to_gpu = to_gpu
    monkeypatch.setattr(vectors, "_faiss", lambda: gpu_faiss)
    vectors._gpu_resources.cache_clear()


def test_a_k_above_the_gpu_limit_searches_the_cpu_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    copies: list[_Counted] = []
    _gpu_faiss(monkeypatch, copies)
    try:
        rows = [(i, f"entry number {i} of many") for i in range(1, vectors.GPU_MAX_K + 200)]
        index = vectors.VectorIndex(Store(tmp_path, create=True), "many", lambda: iter(rows), HashEmbedder(), "hash-64")
        assert len(index.search("entry number 7", vectors.GPU_MAX_K + 100)) == vectors.GPU_MAX_K + 100
        assert len(index.search("entry number 7", 5)) == 5
        assert [c.searches for c in copies] == [1], "only the small k reached the GPU copy"
    finally:
        vectors._gpu_resources.cache_clear()


def test_unscoped_search_runs_on_the_gpu_copy_and_scoped_search_on_the_cpu(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copies: list[_Counted] = []
    _gpu_faiss(monkeypatch, copies)
    try:
        store = Store(tmp_path, create=True)
        rows = list(enumerate(TEXTS, start=1))
        index = vectors.VectorIndex(store, "texts", lambda: iter(rows), HashEmbedder(), "hash-64")
        best = index.search("a man repairs a bicycle", 2)
        assert best[0][0] == 2 and len(copies) == 1 and copies[0].searches == 1
        index.search("cook pasta", 1)
        assert len(copies) == 1 and copies[0].searches == 2, "the GPU copy is made once and reused"
        assert index.search("a man repairs a bicycle", 1, allowed_ids=[3, 4])[0][0] in (3, 4)
        assert copies[0].searches == 2, "a scoped search ran on the CPU index"
    finally:
        vectors._gpu_resources.cache_clear()


def test_packaging_never_installs_two_faiss_builds() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]

    def faiss_builds(requirements: list[str]) -> set[str]:
        return {m.group(0) for r in requirements if (m := re.match(r"faiss-[a-z0-9-]+", r))}

    assert faiss_builds(project["dependencies"]) == set(), "the core installs no faiss build of its own"
    extras = {name: faiss_builds(reqs) for name, reqs in project["optional-dependencies"].items()}
    assert extras["cpu"] == {"faiss-cpu"} and extras["gpu"] <= {"faiss-gpu-cu12", "faiss-gpu-cu11"} and extras["gpu"]
    assert all(len(builds) <= 1 for builds in extras.values())
    makefile = (REPO / "Makefile").read_text()
    installs = re.findall(r"pip install .*'\.\[([a-z,]+)\]'", makefile)
    assert installs and all("cpu" in extras_.split(",") and "gpu" not in extras_.split(",") for extras_ in installs)
