"""`videomem doctor`: each check fails on a constructed bad environment with the line that fixes
it, and passes on the offline profile. No GPU here: where a check reads the GPU, the GPU's name
and memory are stand-ins; package versions are monkeypatched where the real release cannot be
installed beside the one the tests run on."""

from __future__ import annotations

import importlib.metadata
import json
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement

from videomem import doctor
from videomem.config import default_path, shipped_profiles, AgentConfig, ModelsConfig, load_agent, load_models, load_pipeline
from videomem.store import Store

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    tomllib = pytest.importorskip("tomli")

GIB = 1024**3
INPROCESS = default_path("models", "vllm-inprocess-qwen3-vl-8b")
SERVED = default_path("models", "vllm-qwen3-vl-8b")


def profile(**roles: Any) -> ModelsConfig:
    base = {"vlm": {"backend": "offline"}, "llm": {"backend": "offline"}, "text_embedder": {"backend": "offline"}}
    return ModelsConfig.model_validate(base | roles)


def failed(checks: list[doctor.Check]) -> list[doctor.Check]:
    return [c for c in checks if c.ok is False]


@pytest.fixture
def gpu(monkeypatch: pytest.MonkeyPatch):
    """Sets the GPU doctor sees: (name, GiB), or None for none."""

    def set_gpu(found: tuple[str, float] | None) -> None:
        monkeypatch.setattr(doctor, "_gpu", lambda: None if found is None else (found[0], int(found[1] * GIB)))

    set_gpu(None)
    return set_gpu


def test_every_check_passes_on_the_offline_profile(tmp_path: Path) -> None:
    store = Store(tmp_path / "store", create=True)
    store.close()
    found = doctor.checks(load_models(), load_pipeline(), load_agent(), store=tmp_path / "store", ray=True)
    assert found and all(c.ok for c in found), [c.lines() for c in failed(found)]
    doctor.preflight(load_models(), load_pipeline(), load_agent(), store=tmp_path / "store", port=8750, ray=True)


def test_the_supported_ranges_are_the_ones_pyproject_declares() -> None:
    project = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())["project"]
    declared = [*project["dependencies"], *(r for extra in project["optional-dependencies"].values() for r in extra)]
    specs = {Requirement(r).name: str(Requirement(r).specifier) for r in declared}
    assert {name: specs[name] for name in doctor.SUPPORTED} == doctor.SUPPORTED
    assert specs["faster-whisper"] == ">=1.2.1", "1.1.x takes clip_timestamps as sample indices"
    assert specs["ray"] == ">=2.59", "the first release whose map_batches takes label_selector"
    assert specs["vllm"] == ">=0.19.1", "the first release that admits transformers 5"


def test_a_package_missing_or_outside_its_range_fails_with_its_install_line(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.metadata.version
    installed = {"faster-whisper": "1.1.1", "ray": "2.58.1"}

    def version(name: str) -> str:
        if name == "vllm":
            raise importlib.metadata.PackageNotFoundError(name)
        return installed.get(name) or real(name)

    monkeypatch.setattr(importlib.metadata, "version", version)
    models = profile(
        vlm={"backend": "vllm", "model": "q"}, asr={"backend": "faster_whisper", "model": "large-v3", "device": "cpu"}
    )
    bad = {c.name: c for c in failed(doctor.check_packages(models, ray=True))}
    assert bad["package vllm"].fix == "pip install 'videomem[vllm]'"
    assert "1.1.1 is outside the supported >=1.2.1" in bad["package faster-whisper"].detail
    assert bad["package faster-whisper"].fix == "pip install 'faster-whisper>=1.2.1'"
    assert bad["package ray"].fix == "pip install 'ray>=2.59'"
    assert set(bad) == {"package vllm", "package faster-whisper", "package ray"}


def test_faiss_must_be_installed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.metadata.version
    monkeypatch.setattr(importlib.metadata, "version", lambda name: "1.15.1" if name == "faiss-gpu-cu12" else real(name))
    [check] = [c for c in doctor.check_packages(profile()) if c.name == "package faiss"]
    assert check.ok is False and "faiss-cpu and faiss-gpu-cu12 are both installed" in check.detail
    monkeypatch.setattr(doctor.importlib.util, "find_spec", lambda name: None)
    [check] = [c for c in doctor.check_packages(profile()) if c.name == "package faiss"]
    assert check.ok is False and check.fix.startswith("pip install 'videomem[cpu]'")


def test_cuda_is_required_where_a_role_says_cuda(gpu) -> None:
    models = profile(asr={"backend": "transformers", "model": "w", "device": "cuda"})
    [check] = doctor.check_cuda(models)
    assert check.ok is False and "device: cpu for asr" in check.fix
    gpu(("NVIDIA H100", 80))
    [check] = doctor.check_cuda(models)
    assert check.ok and "H100" in check.detail
    assert doctor.check_cuda(profile()) == [], "nothing asks for a GPU"


def test_ctranslate2s_cuda_libraries_are_read_from_its_binary_and_must_load(gpu, monkeypatch: pytest.MonkeyPatch) -> None:
    assert "libcublas.so.12" in doctor._ctranslate2_cuda_libraries(), "the installed CTranslate2 4.x loads CUDA 12's cuBLAS"
    gpu(("NVIDIA H100", 80))
    models = profile(asr={"backend": "faster_whisper", "model": "large-v3", "device": "cuda"})
    monkeypatch.setattr(doctor, "_loadable", lambda library: False)  # a CUDA 13 machine: no CUDA 12 cuBLAS
    [check] = doctor.check_ctranslate2(models)
    assert check.ok is False and "libcublas.so.12" in check.detail and "backend: transformers" in check.fix
    monkeypatch.setattr(doctor, "_loadable", lambda library: True)
    assert doctor.check_ctranslate2(models)[0].ok
    assert doctor.check_ctranslate2(load_models(INPROCESS)) == [], "the shipped GPU profiles do not use CTranslate2"


def test_the_roles_sharing_a_gpu_must_fit_in_it(gpu, tmp_path: Path) -> None:
    shipped = load_models(INPROCESS)
    [check] = doctor.check_gpu_memory(shipped)
    assert check.ok is None, "no GPU, nothing to measure"
    gpu(("NVIDIA H100", 80))
    [check] = doctor.check_gpu_memory(shipped)
    assert check.ok and "asr ~3" in check.detail and "visual_embedder ~1" in check.detail
    gpu(("NVIDIA L4", 24))
    engine_args = {"max_model_len": 8192, "gpu_memory_utilization": 0.85}  # the share shipped before: too much
    over = shipped.model_copy(
        update={role: getattr(shipped, role).model_copy(update={"options": {"engine_args": engine_args}}) for role in ("vlm", "llm")}
    )
    [check] = doctor.check_gpu_memory(over)
    assert check.ok is False and check.fix.startswith("set gpu_memory_utilization: 0.")
    assert float(check.fix.split(": ")[1].split()[0]) * 24 + 4 <= 24, "the suggested share leaves the others room"


def test_frames_a_tool_may_send_against_the_engines_image_limit() -> None:
    agent = AgentConfig(tools=("video.qa", "memory.visual"))
    served = profile(vlm={"backend": "openai", "model": "q", "base_url": "http://localhost:8000/v1"})
    [check] = doctor.check_frames(served, agent)
    assert check.ok is False and "64 frames" in check.detail and "vlm.max_images" in check.fix
    engine = {"engine_args": {"limit_mm_per_prompt": {"image": 8}}}
    clash = profile(vlm={"backend": "vllm", "model": "q", "max_images": 16, "options": engine})
    assert doctor.check_frames(clash, agent)[0].ok is False
    [check] = doctor.check_frames(load_models(SERVED), agent)
    assert check.ok and "memory.visual sends up to 16" in check.detail
    assert doctor.check_frames(load_models(), agent) == []


def test_the_open_clip_activation_must_match_the_weights() -> None:
    plain = profile(visual_embedder={"backend": "open_clip", "model": "ViT-B-32", "pretrained": "openai"})
    [check] = doctor.check_open_clip(plain)
    assert check.ok is False and check.fix == "visual_embedder.model: ViT-B-32-quickgelu"
    for path in [Path(str(default_path("models", n))) for n in shipped_profiles("models")]:
        assert all(c.ok for c in doctor.check_open_clip(load_models(path))), path.name


def test_serve_must_not_take_the_port_of_the_profiles_server() -> None:
    [check] = doctor.check_port(load_models(SERVED), 8000)
    assert check.ok is False and check.fix == "videomem serve --port 8750"
    assert doctor.check_port(load_models(SERVED))[0].ok, "the default port is clear of vLLM's 8000"


@pytest.fixture
def models_server() -> Iterator[dict[str, Any]]:
    """A real HTTP server on 127.0.0.1 answering GET /v1/models with `state["data"]`."""
    state: dict[str, Any] = {"data": []}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            body = json.dumps({"object": "list", "data": state["data"]}).encode()
            self.send_response(200 if self.path == "/v1/models" else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state["url"] = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield state
    httpd.shutdown()
    httpd.server_close()


def test_the_server_must_answer_and_serve_the_profiles_model(models_server: dict[str, Any], monkeypatch) -> None:
    role = {"backend": "openai", "model": "Qwen/Qwen3-VL-8B-Instruct", "base_url": models_server["url"]}
    models = profile(vlm=role, llm=role)
    models_server["data"] = [{"id": "Qwen/Qwen3-VL-8B-Instruct", "object": "model", "owned_by": "vllm"}]
    [check] = doctor.check_servers(models)
    assert check.ok and "(vlm, llm)" in check.name and "enforces JSON schemas" in check.detail
    models_server["data"] = [{"id": "Qwen/Qwen2.5-VL-3B-Instruct", "object": "model", "owned_by": "vllm"}]
    [check] = doctor.check_servers(models)
    assert check.ok is False and "does not serve Qwen/Qwen3-VL-8B-Instruct" in check.detail
    assert "Qwen2.5-VL-3B" in check.detail
    down = {**role, "base_url": "http://127.0.0.1:9/v1"}
    [check] = doctor.check_servers(profile(vlm=down))
    assert check.ok is False and "cannot connect" in check.detail and "start the server" in check.fix
    monkeypatch.delenv("VIDEOMEM_DOCTOR_KEY", raising=False)
    [check] = doctor.check_servers(profile(vlm={**role, "api_key_env": "VIDEOMEM_DOCTOR_KEY"}))
    assert check.ok is False and check.fix == "export VIDEOMEM_DOCTOR_KEY=<your key>"


def test_a_store_embedded_by_another_visual_embedder_fails(tmp_path: Path) -> None:
    clip = {"backend": "open_clip", "model": "ViT-B-32-quickgelu", "pretrained": "openai"}
    with Store(tmp_path, create=True) as store:
        with store.transaction() as tx:
            tx.execute(
                "INSERT INTO videos (id, path, t_offset, duration, fps, n_frames, width, height, rotation, probe_json)"
                " VALUES ('v', 'v.mp4', 0, 10, 25, 250, 32, 18, 0, '{}')"
            )
            tx.execute(
                "INSERT INTO visual_segments (video_id, idx, t_start, t_end, frames_json, embedder, vector)"
                " VALUES ('v', 0, 0, 10, '[]', 'open_clip:ViT-B-32@openai:512', x'00')"
            )
        store.index_dir.mkdir(parents=True, exist_ok=True)
        (store.index_dir / "events.json").write_text(json.dumps({"embedder": "offline:default:384"}))
    found = {c.name: c for c in doctor.check_store(profile(visual_embedder=clip), tmp_path)}
    visual = found["store visual memory"]
    assert visual.ok is False and "open_clip:ViT-B-32@openai" in visual.detail and "--stages visual" in visual.fix
    assert found["store text indexes"].ok and found["store text indexes"].detail == "built with offline:default"
    assert all(c.ok for c in doctor.check_store(profile(visual_embedder=clip), tmp_path, AgentConfig())), (
        "an agent without memory.visual never searches it"
    )
    bge = profile(text_embedder={"backend": "sentence_transformers", "model": "BAAI/bge-small-en-v1.5"})
    assert "rebuilt on first use" in doctor.check_store(bge, tmp_path)[0].detail, "text indexes are rebuilt, not mixed"


def test_ingest_stops_before_it_starts_with_the_failed_checks_fix(run_cli, tmp_path: Path) -> None:
    path = tmp_path / "gpu.yaml"
    path.write_text(
        "vlm: {backend: offline}\nllm: {backend: offline}\ntext_embedder: {backend: offline}\n"
        "asr: {backend: transformers, model: openai/whisper-large-v3-turbo, device: cuda}\n"
    )
    video = tmp_path / "v.mp4"
    video.write_bytes(b"")
    result = run_cli("ingest", video, "--store", tmp_path / "store", "--models", path)
    assert result.code == 2 and not (tmp_path / "store").exists()
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("error: CUDA for asr: torch sees no CUDA GPU; fix: ")


def test_doctor_prints_one_row_per_check_and_exits_1_on_a_failure(run_cli, tmp_path: Path) -> None:
    ok = run_cli("doctor")
    assert ok.code == 0 and ok.stdout.splitlines() and all(line.startswith("✔") for line in ok.stdout.splitlines())
    bad = run_cli("doctor", "--models", SERVED, "--port", "8000")
    assert bad.code == 1
    assert "✗ serve port 8000: the profile's vlm server listens on 8000" in bad.stdout
    assert "    fix: videomem serve --port 8750" in bad.stdout


def test_the_checks_need_no_model_weights(monkeypatch: pytest.MonkeyPatch) -> None:
    """doctor builds no model: loading one here would fail."""
    from videomem.models import registry

    def no_weights(*args, **kwargs):
        raise AssertionError("doctor loaded a model")

    monkeypatch.setattr(registry, "build_engine", no_weights)
    monkeypatch.setattr(registry.ModelSet, "__init__", no_weights)
    for path in [Path(str(default_path("models", n))) for n in shipped_profiles("models")]:
        doctor.checks(load_models(path), load_pipeline(), load_agent(), network=False)

