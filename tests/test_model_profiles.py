"""Every shipped models profile validates, and names what its backends need."""

from __future__ import annotations

from pathlib import Path

import pytest

from videomem.config import default_path, load_models, shipped_profiles

PROFILES = [Path(str(default_path("models", name))) for name in shipped_profiles("models")]


def test_the_expected_profiles_ship() -> None:
    names = {path.stem for path in PROFILES}
    expected = {"offline", "vllm-qwen3-vl-8b", "vllm-inprocess-qwen3-vl-8b", "openai", "hf-qwen2.5-vl-3b", "clip-vit-b-32"}
    assert expected <= names


@pytest.mark.parametrize("path", PROFILES, ids=lambda p: p.stem)
def test_profile_loads(path: Path) -> None:
    profile = load_models(path)
    assert profile.name == path.stem, "a profile's name is its file name"
    for role in (profile.vlm, profile.llm):
        if role.backend == "openai":
            assert role.base_url and role.base_url.rstrip("/").endswith("/v1")
    if profile.visual_embedder is not None and profile.visual_embedder.backend == "open_clip":
        assert profile.visual_embedder.pretrained, "open_clip without pretrained weights would be random"
