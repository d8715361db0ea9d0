"""`ingest --ray` on a local Ray cluster (2 CPUs, started once for this module, shut down at its
end): the store it builds equals the local runner's from the same videos, a re-run does nothing,
and a vision worker SIGKILLed mid-run is restarted by Ray with the store ending complete and
nothing written twice.

The models are kill_stage.py's deterministic stand-ins plus a pixel embedder for visual memory,
so what is under test is the distribution: decode tasks, actor pools, the driver's commits.
"""

from __future__ import annotations

import os
import signal
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
from kill_stage import PIPELINE, HashEmbedder, ScriptedModels, ScriptedVision, contents

from conftest import make_video
from videomem.config import ModelsConfig, PipelineConfig, RoleConfig
from videomem.core import ClipView
from videomem.models.tasks.objects import ClipNotes
from videomem.errors import ConfigError
from videomem.pipeline.ray_runner import RayOptions, gpus_per_actor, vision_call_size
from videomem.pipeline.runner import ingest
from videomem.store import Store

ray = pytest.importorskip("ray")

STAGES = ("sample", "caption", "objects", "visual")
TESTS = Path(__file__).resolve().parent


class PixelEmbedder:
    """Frames as their 4x4 grey thumbnails; texts hashed like HashEmbedder: deterministic and instant."""

    dim = 16

    def embed_images(self, images: Sequence) -> np.ndarray:
        out = np.stack([np.asarray(i.convert("L").resize((4, 4)), np.float32).ravel() + 1.0 for i in images])
        return out / np.linalg.norm(out, axis=1, keepdims=True)

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), np.float32)
        for i, text in enumerate(texts):
            out[i, zlib.crc32(text.encode()) % self.dim] = 1.0
        return out


@dataclass
class RayModels(ScriptedModels):
    cfg: ModelsConfig = field(
        default_factory=lambda: ModelsConfig(
            vlm=RoleConfig(backend="offline"),
            llm=RoleConfig(backend="offline"),
            text_embedder=RoleConfig(backend="offline"),
            visual_embedder=RoleConfig(backend="offline", batch_size=4),
        )
    )
    visual_embedder: PixelEmbedder = field(default_factory=PixelEmbedder)
    text_embedder: HashEmbedder = field(default_factory=HashEmbedder)


@dataclass
class DyingVision(ScriptedVision):
    """Kills its own worker process (SIGKILL, no clean-up) at its `at`-th call, once per test:
    `marker` records that it did, so the restarted actor answers."""

    marker: str = ""
    at: int = 3
    calls: int = 0

    def describe_clips(self, clips: Sequence[ClipView]) -> list[ClipNotes]:
        self.calls += 1
        if self.calls == self.at and not Path(self.marker).exists():
            Path(self.marker).touch()
            os.kill(os.getpid(), signal.SIGKILL)
        return super().describe_clips(clips)


@dataclass(frozen=True)
class DiesOnce:
    """A models factory whose vision worker dies mid-run (never the driver, which asks no vision)."""

    marker: str
    driver: int

    def __call__(self) -> RayModels:
        models = RayModels()
        if os.getpid() != self.driver:
            models.vision = DyingVision(marker=self.marker)
        return models


@pytest.fixture(scope="module")
def cluster() -> Iterator[None]:
    path = os.pathsep.join([str(TESTS.parent / "src"), str(TESTS)])
    ray.init(num_cpus=2, logging_level="WARNING", runtime_env={"env_vars": {"PYTHONPATH": path}})
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def videos(tmp_path_factory) -> list[Path]:
    root = tmp_path_factory.mktemp("ray-videos")
    return [make_video(root / f"{name}.mp4", seconds=12, size=(64, 48), fps=2, gop=4) for name in ("a", "b")]


@pytest.fixture(scope="module")
def local_store(tmp_path_factory, videos) -> Path:
    root = tmp_path_factory.mktemp("ray-local") / "store"
    with Store(root, create=True) as store:
        report = ingest(videos, store, PIPELINE, RayModels, stages=STAGES, show_progress=False)
    assert report.ok, report.all_failures()
    return root


def _ray_ingest(root: Path, videos: list[Path], factory=RayModels):
    with Store(root, create=True) as store:
        return ingest(
            videos, store, PIPELINE, factory, stages=STAGES, workers=2, show_progress=False, ray=RayOptions(actors=1)
        )


def _contents(root: Path) -> dict[str, list[tuple]]:
    """Every row the clip-level stages write, by natural keys (row ids may differ), and every frame file."""
    out = contents(root)
    with Store(root, read_only=True) as store:
        visual = "SELECT video_id, idx, t_start, t_end, frames_json, embedder, vector FROM visual_segments ORDER BY video_id, idx"
        out["visual"] = [tuple(r) for r in store.query(visual)]
    out["frame files"] = sorted((p.relative_to(root).as_posix(), p.read_bytes()) for p in (root / "frames").rglob("*.jpg"))
    return out


def test_ray_store_equals_the_local_one_and_a_rerun_does_nothing(cluster, videos, local_store, tmp_path) -> None:
    report = _ray_ingest(tmp_path / "store", videos)
    assert report.ok, report.all_failures()
    done = {r.stage: r.done for r in report.results}
    assert done == {"sample": 12, "caption": 12, "objects": 12, "visual": 4}
    ray_rows, local_rows = _contents(tmp_path / "store"), _contents(local_store)
    assert len(ray_rows["frames"]) == 24 and len(ray_rows["visual"]) == 4
    assert ray_rows == local_rows

    again = _ray_ingest(tmp_path / "store", videos)
    assert again.ok
    assert {r.stage: (r.done, r.skipped) for r in again.results if r.stage != "objects"} == {
        "sample": (0, 12), "caption": (0, 12), "visual": (0, 4)
    }
    assert _contents(tmp_path / "store") == local_rows


def test_a_vision_worker_killed_mid_run_is_restarted_and_nothing_is_doubled(cluster, videos, local_store, tmp_path) -> None:
    marker = tmp_path / "killed"
    report = _ray_ingest(tmp_path / "store", videos, DiesOnce(str(marker), os.getpid()))
    assert marker.exists(), "the vision worker was never killed"
    assert report.ok, report.all_failures()
    rows = _contents(tmp_path / "store")
    assert rows == _contents(local_store)
    assert len(rows["events"]) == len({(r[0], r[1]) for r in rows["events"]}) == 12
    assert len(rows["progress"]) == len(set(rows["progress"]))


def test_ray_actors_without_ray_is_a_one_line_error(run_cli, videos, tmp_path) -> None:
    result = run_cli("ingest", videos[0], "--store", tmp_path / "store", "--ray-actors", "2")
    assert result.code == 2
    assert "--ray-actors" in result.stderr and "--ray" in result.stderr
    assert not (tmp_path / "store").exists()


@pytest.mark.parametrize(
    ("role", "cluster_gpus", "gpus"),
    [
        (RoleConfig(backend="vllm", model="m", options={"engine_args": {"tensor_parallel_size": 2}}), 8, 2.0),
        (RoleConfig(backend="vllm", model="m"), 1, 1.0),
        (RoleConfig(backend="transformers", model="m"), 4, 1.0),
        (RoleConfig(backend="transformers", model="m"), 0, 0.0),
        (RoleConfig(backend="open_clip", model="m", device="cpu"), 4, 0.0),
        (RoleConfig(backend="openai", model="m", base_url="http://x/v1"), 4, 0.0),
        (RoleConfig(backend="offline"), 4, 0.0),
    ],
)
def test_gpus_per_actor_follow_the_profile_and_the_cluster(role, cluster_gpus, gpus) -> None:
    assert gpus_per_actor(role, cluster_gpus) == gpus


def test_a_vllm_profile_on_a_cluster_without_gpus_is_a_one_line_error() -> None:
    with pytest.raises(ConfigError, match="no GPU"):
        gpus_per_actor(RoleConfig(backend="vllm", model="Qwen/Qwen3-VL-8B-Instruct"), 0)


def test_a_vision_actor_gets_the_engines_window_unless_the_pipeline_says_otherwise() -> None:
    """The local runner hands vLLM 512 clips at once; an actor handed caption_batch_size (8)
    would leave the engine's scheduler with nothing to batch."""
    vllm = RoleConfig(backend="vllm", model="Qwen/Qwen3-VL-8B-Instruct")
    assert vision_call_size(PipelineConfig(caption_batch_size=8), vllm) == 512
    assert vision_call_size(PipelineConfig(), vllm.model_copy(update={"options": {"window": 64}})) == 64
    assert vision_call_size(PipelineConfig(), RoleConfig(backend="transformers", model="m")) == 256
    assert vision_call_size(PipelineConfig(caption_batch_size=8), RoleConfig(backend="offline")) == 8
    assert vision_call_size(PipelineConfig(ray_vision_batch_size=32), vllm) == 32
