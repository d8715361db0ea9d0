"""Profiles load, and a bad value is one line naming the file, the key and what is allowed."""

from pathlib import Path

import pytest

from videomem.config import (
    AgentConfig,
    PipelineConfig,
    default_path,
    load_agent,
    load_models,
    load_pipeline,
    load_yaml,
    shipped_profiles,
)
from videomem.errors import ConfigError


def test_default_pipeline_matches_the_design() -> None:
    cfg = load_pipeline()
    assert cfg.clip_seconds == 10 and cfg.frames_per_clip == 2
    assert cfg.episodic_scales == (10, 30, 180, 600)
    assert cfg.semantic_segment_seconds == 300 and cfg.visual_segment_seconds == 10


def test_egolife_pipeline_scales() -> None:
    cfg = load_pipeline(default_path("pipelines", "egolife"))
    assert cfg.episodic_scales == (30, 180, 600, 3600)


@pytest.mark.parametrize("folder,model", [("pipelines", PipelineConfig), ("agents", AgentConfig)])
def test_every_shipped_profile_validates(folder: str, model: type) -> None:
    files = [default_path(folder, name) for name in shipped_profiles(folder)]
    assert files, f"no profiles in {folder}/"
    for path in files:
        assert isinstance(load_yaml(path, model), model)


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "p.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    "text,needle",
    [
        ("clip_seconds: -1\n", "clip_seconds: Input should be greater than 0 (got -1)"),
        ("frames_per_clip: many\n", "frames_per_clip"),
        ("stages: [sample, dance]\n", "unknown stage 'dance'; allowed: sample, transcribe, caption, objects"),
        ("episodic_scales: [30, 10]\n", "strictly increasing"),
        ("clip_seconds: 10\ncolour: red\n", "colour: Extra inputs are not permitted"),
        ("clip_seconds: [\n", "not valid YAML"),
        ("- just\n- a list\n", "expected a mapping"),
    ],
)
def test_bad_pipeline_is_one_clear_line(tmp_path: Path, text: str, needle: str) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_pipeline(path)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(str(path))
    assert needle in message


def test_missing_profile(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such file"):
        load_agent(tmp_path / "nope.yaml")


def test_models_profile_rules(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="needs 'base_url'"):
        load_models(_write(tmp_path, "vlm: {backend: openai, model: m}\nllm: {backend: offline}\ntext_embedder: {backend: offline}\n"))
    with pytest.raises(ConfigError, match="vlm.backend 'open_clip' cannot generate"):
        load_models(_write(tmp_path, "vlm: {backend: open_clip, model: ViT-B-32}\nllm: {backend: offline}\ntext_embedder: {backend: offline}\n"))
    with pytest.raises(ConfigError, match="vlm: Field required"):
        load_models(_write(tmp_path, "llm: {backend: offline}\ntext_embedder: {backend: offline}\n"))


def test_stages_are_put_in_pipeline_order(tmp_path: Path) -> None:
    cfg = load_pipeline(_write(tmp_path, "stages: [objects, sample]\n"))
    assert cfg.stages == ("sample", "objects")
