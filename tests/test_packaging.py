"""The package stands on its own: profiles are package data found by name, importing the
library leaves the caller's environment alone, and the layers hold (no import cycles)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import videomem
from videomem.cli import app
from videomem.config import default_path, load_agent, load_models, load_pipeline, shipped_profiles
from videomem.errors import ConfigError

PACKAGE = Path(videomem.__file__).parent


def test_shipped_profiles_are_package_data() -> None:
    for kind in ("pipelines", "models", "agents"):
        names = shipped_profiles(kind)
        assert names and all(Path(str(default_path(kind, n))).is_relative_to(PACKAGE) for n in names)
    assert {"telemem", "worldmm", "full", "caption-rag", "caption-rag-question"} <= set(shipped_profiles("agents"))


def test_a_profile_is_found_by_name_and_a_file_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert load_agent("worldmm").name == "worldmm"
    assert load_pipeline("egolife").clip_seconds == load_pipeline(default_path("pipelines", "egolife")).clip_seconds
    assert load_models().name == "offline"
    monkeypatch.chdir(tmp_path)
    Path("worldmm").write_text("name: mine\nkind: react\n")
    assert load_agent("worldmm").name == "mine"  # a file given on the command line wins over a shipped name


def test_an_unknown_profile_name_is_one_line_naming_the_shipped_ones() -> None:
    with pytest.raises(ConfigError) as err:
        load_agent("no-such-agent")
    assert "\n" not in str(err.value) and "telemem" in str(err.value) and "no-such-agent" in str(err.value)


def test_profiles_command_lists_every_shipped_profile() -> None:
    result = CliRunner().invoke(app, ["profiles"])
    assert result.exit_code == 0, result.output
    for kind in ("pipelines", "models", "agents"):
        for name in shipped_profiles(kind):
            assert f"  {name}" in result.output
    assert "telemem (default)" in result.output


def test_importing_the_library_leaves_the_environment_alone() -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "ONEDNN_PRIMITIVE_CACHE_CAPACITY")}
    code = (
        "import os, videomem.pipeline.runner, videomem.agent.react\n"
        "print(os.environ.get('OMP_WAIT_POLICY'), os.environ.get('ONEDNN_PRIMITIVE_CACHE_CAPACITY'))"
    )
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.split() == ["None", "None"]


def test_the_package_has_no_import_cycles() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    import grimp
    from import_cycles import components

    graph = grimp.build_graph("videomem")
    modules = set(graph.modules)
    edges = {m: set(graph.find_modules_directly_imported_by(m)) & modules for m in modules}
    assert components(edges) == []


def test_the_shipped_path_of_a_profile_names_it_from_any_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert load_agent("agents/caption-rag.yaml") == load_agent("caption-rag")
    with pytest.raises(ConfigError, match="no such file"):
        load_agent("agents/no-such-agent.yaml")
