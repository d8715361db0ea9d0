"""Visual memory: the `visual` stage, segment search, time-range frames, the `memory.visual`
tool, the offline and open_clip visual embedders, and their CLI views."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from memory_stores import built, hand_store, offline_models, picture_store, text_picture
from PIL import Image, ImageDraw
from tiny_models import TINY_CLIP, TINY_CLIP_ARCH, build_tiny_clip

from videomem.agent.tools import DESCRIBE_FRAMES, Memories, ToolCallError, Toolbox
from videomem.config import AgentConfig, ModelsConfig, PipelineConfig, RoleConfig, VisualSettings, load_agent, load_models
from videomem.errors import ConfigError, ModelError, StoreError
from videomem.store.frames import open_frame
from videomem.memory.visual import VisualMemory
from videomem.models.tasks.agent import AnswerOut
from videomem.models.usage import UsageMeter
from videomem.core import ClipView
from videomem.models.offline.scene import SceneAnalyser
from videomem.models.offline.vision import caption
from videomem.models.registry import ModelSet
from videomem.pipeline.base import MemoryStage, StageContext
from videomem.core import VideoSource
from videomem.store import Store

DAY1_11 = 11 * 3600.0
"""DAY1 11:00:00 on an EgoLife week timeline."""

# ------------------------------------------------------------------ doubles


class ColourEmbedder:
    """VisualEmbedder double: an image is its mean colour; a text names a colour. Counts what
    it embeds and can fail on a given call, like a backend going away."""

    NAMES = {"red": (1.0, 0.0, 0.0), "green": (0.0, 1.0, 0.0), "blue": (0.0, 0.0, 1.0), "grey": (0.6, 0.6, 0.6)}

    def __init__(self, fail_on_call: int | None = None) -> None:
        self.dim = 3
        self.calls: list[int] = []
        self.fail_on_call = fail_on_call

    def embed_images(self, images: Sequence[Image.Image]) -> np.ndarray:
        self.calls.append(len(images))
        if self.fail_on_call == len(self.calls):
            raise ModelError("visual embedder went away")
        rows = np.array([np.asarray(i, dtype=np.float32).reshape(-1, 3).mean(0) + 1.0 for i in images])
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        rows = np.array([self.NAMES[t] for t in texts], dtype=np.float32)
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)


class FrameVision:
    """`FrameAnswering` double: records the question and the frames each answer was asked about."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, ClipView]] = []

    def answer_from_frames(self, question: str, clip: ClipView, choices=None) -> AnswerOut:
        self.asked.append((question, clip))
        return AnswerOut(answer=f"{len(clip.frames)} frames from {clip.t_start:g} to {clip.t_end:g}")


class Models:
    """A ModelSet stand-in: a models profile (whose visual_embedder names the embedder) and doubles."""

    def __init__(
        self, embedder=None, model: str = "colour-mean", batch_size: int = 4, vision=None, max_images: int | None = None
    ) -> None:
        self.cfg = ModelsConfig(
            name="test",
            vlm=RoleConfig(backend="offline", max_images=max_images),
            llm=RoleConfig(backend="offline"),
            text_embedder=RoleConfig(backend="offline"),
            visual_embedder=RoleConfig(backend="open_clip", model=model, pretrained="x", batch_size=batch_size),
        )
        self.visual_embedder = embedder or ColourEmbedder()
        self.vision = vision or FrameVision()
        self.meter = UsageMeter()


def _solid(rgb: tuple[int, int, int]) -> Image.Image:
    return Image.new("RGB", (320, 180), rgb)


def _dense_store(root: Path, seconds: int = 120, spacing: float = 0.5, video_id: str = "v") -> Store:
    """One video of 10-s clips with a frame every `spacing` seconds (at spacing/2 + k·spacing)."""
    store = Store(root, create=True)
    (store.frames_dir / video_id).mkdir(parents=True, exist_ok=True)
    tiny = Image.new("RGB", (32, 18), (120, 80, 40))
    with store.transaction() as tx:
        tx.execute(
            "INSERT INTO videos (id, path, t_offset, duration, fps, n_frames, width, height, rotation, probe_json)"
            " VALUES (?, ?, 0, ?, 25, ?, 32, 18, 0, '{}')",
            (video_id, f"{video_id}.mp4", seconds, 25 * seconds),
        )
        per_clip = round(10 / spacing)
        for idx in range(seconds // 10):
            clip = tx.execute(
                "INSERT INTO clips (video_id, idx, t_start, t_end) VALUES (?, ?, ?, ?)", (video_id, idx, idx * 10.0, idx * 10.0 + 10)
            ).lastrowid
            for k in range(per_clip):
                relative = f"frames/{video_id}/{idx:05d}_{k}.jpg"
                tiny.save(store.root / relative)
                tx.execute(
                    "INSERT INTO frames (clip_id, video_id, t, path, width, height) VALUES (?, ?, ?, ?, 32, 18)",
                    (clip, video_id, idx * 10.0 + spacing / 2 + k * spacing, relative),
                )
    return store


def _times(store: Store, paths: Sequence[str]) -> list[float]:
    marks = ",".join("?" * len(paths))
    return [r["t"] for r in store.query(f"SELECT t FROM frames WHERE path IN ({marks}) ORDER BY t", tuple(paths))]


# ------------------------------------------------------------------ time ranges


def test_range_returns_frames_at_most_1_fps_at_most_64_and_none_after_until(tmp_path: Path) -> None:
    store = _dense_store(tmp_path / "s")  # 240 frames, 2 a second
    memory = VisualMemory(store, Models())
    [found] = memory.retrieve("00:00:10 - 00:01:50", 5)
    times = _times(store, found.frames)
    assert found.source == "frames" and (found.t_start, found.t_end) == (10, 110) and found.video_id == "v"
    assert len(times) == 64 and 10 <= times[0] and times[-1] <= 110
    assert min(np.diff(times)) >= 1.0
    assert found.text.startswith("64 frames at 00:00:10, ")

    every = VisualMemory(store, Models(), VisualSettings(max_frames=256)).retrieve("10 - 110", 5)[0]
    assert _times(store, every.frames) == [10.25 + k for k in range(100)]  # exactly 1 a second
    slow = VisualMemory(store, Models(), VisualSettings(fps=0.25)).retrieve("10-110", 5)[0]
    assert len(slow.frames) == 25 and min(np.diff(_times(store, slow.frames))) >= 4.0

    for until, last_clip_end in ((60.0, 60.0), (55.0, 50.0)):  # 55: the clip 50-60 is not over yet
        [seen] = memory.retrieve("00:00:10 - 00:01:50", 5, until=until)
        times = _times(store, seen.frames)
        assert times[-1] < last_clip_end <= until and seen.t_end == last_clip_end
        assert len(times) == last_clip_end - 10  # still one a second, all of them
    assert memory.retrieve("00:01:00 - 00:01:50", 5, until=55.0) == []


def test_range_is_scoped_by_video_and_a_short_range_gets_its_clips_frames(tmp_path: Path) -> None:
    picture_store(tmp_path, [_solid((200, 30, 30))] * 3, video_id="a")
    store = picture_store(tmp_path, [_solid((30, 30, 200))] * 3, video_id="b")
    memory = VisualMemory(store, Models())
    both = memory.retrieve("00:00:00 - 00:00:30", 5)
    assert [e.video_id for e in both] == ["a", "b"] and all(len(e.frames) == 6 for e in both)
    [only] = memory.retrieve("00:00:00 - 00:00:30", 5, video_id="b")
    assert only.video_id == "b" and all(p.startswith("frames/b/") for p in only.frames)
    [short] = memory.retrieve("00:00:11 - 00:00:12", 5, video_id="a")  # no frame inside: the clip's
    assert _times(store, short.frames) == [12.5, 17.5] and (short.t_start, short.t_end) == (11, 12)


def test_visual_tool_shows_a_range_to_the_vlm_with_the_question(tmp_path: Path) -> None:
    store = hand_store(tmp_path, ["KITCHEN"] * 6, t_offset=DAY1_11)
    models = Models()
    cfg = AgentConfig(tools=("memory.visual",))
    toolbox = Toolbox(store, models, Memories.open(store, models, cfg), cfg, question="What colour is the kettle?")
    schema = toolbox.schemas()[0]
    assert schema["name"] == "memory.visual" and schema["parameters"]["required"] == ["query"]
    assert "time range" in schema["description"] and "DAY1 11:00:00 - DAY1 11:02:00" in schema["description"]

    result = toolbox.call("memory.visual", {"query": "DAY1 11:00:10 - DAY1 11:00:40"})
    question, view = models.vision.asked[-1]
    assert question == "What colour is the kettle?"
    assert view.frame_times == [DAY1_11 + t for t in (12.5, 17.5, 22.5, 27.5, 32.5, 37.5)]
    [seen] = result.evidence
    assert seen.source == "visual" and seen.text == "6 frames from 39610 to 39640" and len(seen.frames) == 6
    assert (seen.t_start, seen.t_end) == (DAY1_11 + 10, DAY1_11 + 40)
    assert result.observation.startswith("From 6 frame(s) at DAY1 11:00:10-DAY1 11:00:40: 6 frames")

    hidden = Toolbox(store, models, Memories.open(store, models, cfg), cfg, until=DAY1_11 + 30)
    hidden.call("memory.visual", {"query": "DAY1 11:00:10 - DAY1 11:00:40"})
    question, view = models.vision.asked[-1]
    assert question == DESCRIBE_FRAMES and max(view.frame_times) < DAY1_11 + 30
    late = hidden.call("memory.visual", {"query": "DAY1 11:00:40 - DAY1 11:00:50"})
    assert late.evidence == [] and "before the query time DAY1 11:00:30" in late.observation
    with pytest.raises(ToolCallError, match="ends before it starts"):
        toolbox.call("memory.visual", {"query": "DAY1 11:00:40 - DAY1 11:00:10"})


def test_tools_send_at_most_the_engines_image_limit_chosen_evenly(tmp_path: Path) -> None:
    """Frames are stored densely and the agent allows 64 (memory.visual) or 32 (video.qa) a
    request; the engine takes 16 images a prompt (vLLM's limit_mm_per_prompt): a longer range
    must still reach it as 16 frames from its start to its end, not fail the question."""
    store = _dense_store(tmp_path, seconds=120, spacing=1.0)
    models = Models(max_images=16)
    cfg = AgentConfig(tools=("video.qa", "memory.visual"), qa_max_frames=32)
    toolbox = Toolbox(store, models, Memories.open(store, models, cfg), cfg, question="What is on the table?")

    result = toolbox.call("memory.visual", {"query": "00:00:00 - 00:02:00"})
    _, view = models.vision.asked[-1]
    assert len(view.frames) == 16 and len(result.evidence[0].frames) == 16
    assert view.frame_times[0] < 2 and view.frame_times[-1] > 118, "spread over the whole range"
    gaps = np.diff(view.frame_times)
    assert gaps.max() - gaps.min() <= 1.0 + 1e-9, "evenly spaced"
    assert result.observation.startswith("From 16 frame(s)")

    toolbox.call("video.qa", {"question": "What is on the table?", "t_start": 0, "t_end": 120})
    _, view = models.vision.asked[-1]
    assert len(view.frames) == 16 and view.frame_times[-1] - view.frame_times[0] > 110


def test_visual_tool_refuses_a_range_over_parallel_videos(tmp_path: Path) -> None:
    picture_store(tmp_path, [_solid((200, 30, 30))] * 2, video_id="a")
    store = picture_store(tmp_path, [_solid((30, 30, 200))] * 2, video_id="b")
    models = Models()
    cfg = AgentConfig(tools=("memory.visual",))
    result = Toolbox(store, models, Memories.open(store, models, cfg), cfg).call("memory.visual", {"query": "0 - 20"})
    assert "several videos recorded at the same time (a, b)" in result.observation and models.vision.asked == []
    scoped = Toolbox(store, models, Memories.open(store, models, cfg), cfg, video_id="b")
    assert len(scoped.call("memory.visual", {"query": "0 - 20"}).evidence[0].frames) == 4


# ------------------------------------------------------------------ the stage


def _build(store: Store, models: Models, seconds: float = 10.0):
    return built(VisualMemory(store, models), PipelineConfig(visual_segment_seconds=seconds), ["v"])


def _rows(store: Store) -> list:
    return store.query("SELECT idx, t_start, t_end, frames_json, embedder, vector FROM visual_segments ORDER BY idx")


def test_stage_resumes_embeds_nothing_twice_and_redoes_what_changed(tmp_path: Path) -> None:
    shades = [(200, 30, 30), (30, 200, 30), (30, 30, 200), (150, 150, 150), (200, 30, 30), (30, 200, 30), (30, 30, 200)]
    store = picture_store(tmp_path, [_solid(c) for c in shades])
    failing = ColourEmbedder(fail_on_call=2)
    result = _build(store, Models(failing))  # 4 frames a call: 2 segments per batch
    assert (result.done, len(result.failures)) == (2, 1) and "5 segments left" in result.failures[0][1]
    assert [r["idx"] for r in _rows(store)] == [0, 1]

    resumed = ColourEmbedder()
    result = _build(store, Models(resumed))
    assert (result.done, result.skipped, result.failures, resumed.calls) == (5, 2, [], [4, 4, 2])
    rows = _rows(store)
    assert [(r["t_start"], r["t_end"], len(json.loads(r["frames_json"]))) for r in rows] == [
        (10.0 * i, 10.0 * i + 10, 2) for i in range(7)
    ]
    assert all(abs(np.linalg.norm(np.frombuffer(r["vector"], np.float32)) - 1) < 1e-5 for r in rows)
    assert store.stage_counts()["visual"] == 7

    again = ColourEmbedder()
    assert (_build(store, Models(again)).done, again.calls) == (0, [])
    memory = VisualMemory(store, Models(again))
    assert [e.t_start for e in memory.retrieve("blue", 2)] == [20, 60]
    assert [e.t_start for e in memory.retrieve("blue", 2, until=50)] == [20, 30]

    longer = ColourEmbedder()  # another segment length: rows replaced, none left over
    assert _build(store, Models(longer), seconds=20).done == 4
    assert [(r["t_start"], r["t_end"], len(json.loads(r["frames_json"]))) for r in _rows(store)] == [
        (0, 20, 4), (20, 40, 4), (40, 60, 4), (60, 70, 2)
    ]
    assert store.stage_counts()["visual"] == 4
    rebuilt = VisualMemory(store, Models(longer))
    assert [e.t_start for e in rebuilt.retrieve("blue", 2)] == [60, 20] and rebuilt.index._index.ntotal == 4

    forced = ColourEmbedder()
    MemoryStage("visual").reset(store, [VideoSource(Path("v.mp4"), "v")])
    assert _rows(store) == [] and "visual" not in store.stage_counts()
    assert _build(store, Models(forced), seconds=20).done == 4 and forced.calls == [4, 4, 4, 2]


def test_visual_tool_shows_the_best_segments_of_a_text_query_to_the_vlm(tmp_path: Path) -> None:
    store = picture_store(tmp_path, [_solid((200, 30, 30)), _solid((30, 30, 200)), _solid((40, 40, 180))])
    models = Models()
    _build(store, models)
    for inspect, asked in ((1, [(10, 20)]), (2, [(10, 20), (20, 30)]), (0, [])):
        cfg = AgentConfig(tools=("memory.visual",), visual=VisualSettings(inspect=inspect))
        models.vision.asked.clear()
        toolbox = Toolbox(store, models, Memories.open(store, models, cfg), cfg, question="Which coat is blue?", until=30)
        result = toolbox.call("memory.visual", {"query": "blue", "top_k": 3})
        assert [(view.t_start, view.t_end) for _, view in models.vision.asked] == asked
        assert all(q == "Which coat is blue?" and len(view.frames) == 2 for q, view in models.vision.asked)
        assert result.observation.splitlines()[1].startswith("1. 00:00:10-00:00:20 (visual, ")
        if inspect:
            assert [e.text for e in result.evidence] == ["2 frames from 10 to 20", "2 frames from 20 to 30"][:inspect]
            assert result.observation.splitlines()[-1].startswith(f"Looking at the 2 frame(s) of {inspect}: 2 frames")
        else:
            assert [e.text for e in result.evidence] == ["segment of 2 frames"] * 3


def test_segments_the_scores_cannot_tell_apart_are_not_returned_in_clip_order(tmp_path: Path) -> None:
    blank = _solid((90, 90, 90))
    store = picture_store(tmp_path, [blank, blank, blank, blank, _solid((30, 30, 200)), blank])
    models = Models()
    _build(store, models)
    memory = VisualMemory(store, models)
    assert memory.search("red", 2, until=40) == [], "four identical frames: no ranking, so no evidence"
    found = memory.search("blue", 2)
    assert [(e.t_start, e.t_end) for e in found] == [(40, 50)], "the one segment that stands out, not a blank one after it"
    assert [(e.t_start, e.t_end) for e in memory.search("blue", 6)] == [(40, 50), (0, 10), (10, 20), (20, 30), (30, 40), (50, 60)]


def test_another_embedder_reembeds_and_is_never_searched_across(tmp_path: Path) -> None:
    store = picture_store(tmp_path, [_solid((200, 30, 30)), _solid((30, 30, 200))])
    _build(store, Models(ColourEmbedder(), model="colour-a"))
    other = Models(ColourEmbedder(), model="colour-b")
    with pytest.raises(StoreError) as info:
        VisualMemory(store, other).retrieve("red", 1)
    assert "embedded by open_clip:colour-a@x:3" in str(info.value) and "\n" not in str(info.value)
    assert VisualMemory(store, other).stats() == {"segments": 2, "frames": 4, "embedder": "open_clip:colour-a@x:3"}
    assert _build(store, other).done == 2
    assert VisualMemory(store, other).retrieve("red", 1)[0].t_start == 0


def test_segments_wait_for_clips_not_sampled_yet(tmp_path: Path) -> None:
    store = picture_store(tmp_path, [_solid((200, 30, 30))] * 3)
    with store.transaction() as tx:  # the video is 50 s long; its last 2 clips are not sampled
        tx.execute("UPDATE videos SET duration = 50")
    result = _build(store, Models())
    assert result.done == 3 and result.failures == [("v", "2 visual segments wait for clips not sampled yet (run ingest with the sample stage)")]


# ------------------------------------------------------------------ the offline embedder


def _shape(colour: tuple[int, int, int], kind: str) -> Image.Image:
    image = _solid((128, 128, 128))
    draw = ImageDraw.Draw(image)
    if kind == "circle":
        draw.ellipse([125, 55, 195, 125], fill=colour)
    else:
        draw.rectangle([120, 60, 200, 120], fill=colour)
    return image


@pytest.fixture(scope="module")
def picture_memory(tmp_path_factory: pytest.TempPathFactory) -> tuple[Store, VisualMemory]:
    """Five segments: two on-screen words, a plain scene, and two colours shown only in pixels."""
    pictures = [
        text_picture("TRAIN TO PARIS"),
        _solid((90, 110, 150)),
        _shape((140, 40, 190), "circle"),  # purple, no text anywhere
        text_picture("LIGHTHOUSE"),
        _shape((240, 140, 30), "box"),  # orange
    ]
    store = picture_store(tmp_path_factory.mktemp("pictures"), pictures)
    memory = VisualMemory(store, offline_models())
    result = MemoryStage("visual").run(StageContext(store, PipelineConfig(), offline_models, show_progress=False), [VideoSource(Path("v.mp4"), "v")])
    assert (result.done, result.failures) == (5, [])
    return store, memory


@pytest.mark.parametrize(
    "query,segment", [("lighthouse", 3), ("train to Paris", 0), ("purple", 2), ("an orange box", 4), ("circle", 2)]
)
def test_offline_embedder_finds_written_words_and_colours_seen_only_in_pixels(picture_memory, query: str, segment: int) -> None:
    _, memory = picture_memory
    best = memory.retrieve(query, 5)
    assert best[0].t_start == 10 * segment and best[0].source == "visual" and len(best) == 5
    assert best[0].frames == (f"frames/v/{segment:05d}_0.jpg", f"frames/v/{segment:05d}_1.jpg")


def test_a_colour_question_is_answered_through_visual_memory_offline(picture_memory) -> None:
    store, _ = picture_memory
    models = offline_models()
    cfg = AgentConfig(tools=("memory.visual",))
    question = "What colour is the circle?"
    toolbox = Toolbox(store, models, Memories.open(store, models, cfg), cfg, question=question)
    result = toolbox.call("memory.visual", {"query": "circle"})
    [seen] = result.evidence
    assert seen.t_start == 20 and "purple" in seen.text.lower() and len(seen.frames) == 2
    assert "1. 00:00:20-00:00:30 (visual, " in result.observation and "Looking at the 2 frame(s) of 1: " in result.observation
    choices = ["red", "green", "purple", "orange"]
    assert models.language.answer(question, choices, result.evidence).choice == "C"


def test_a_frame_is_described_from_its_clips_analysis_without_new_detection(picture_memory, monkeypatch) -> None:
    store, _ = picture_memory
    scene = offline_models().offline_scene
    frames = [open_frame(store.root, "frames/v/00003_0.jpg"), text_picture("HARBOUR").rotate(180)]  # one is new
    scene.analyse([ClipView("v", 30, 40, frames, [32.5, 37.5])])
    reads, read = [], scene.ocr.read
    monkeypatch.setattr(scene.ocr, "read", lambda rgb: reads.append(1) or read(rgb))
    cached = offline_models().visual_embedder.describe(frames[1:])
    assert reads == []
    fresh = SceneAnalyser()  # same detectors, empty cache
    fresh.ocr, fresh.people, fresh.tagger = scene.ocr, scene.people, scene.tagger
    assert [caption(facts) for facts in fresh.analyse([ClipView("v", 0, 0, frames[1:], [0.0])])] == cached
    assert reads == [1]


# ------------------------------------------------------------------ open_clip


def test_open_clip_path_embeds_segments_with_a_tiny_random_clip(tmp_path: Path) -> None:
    weights = build_tiny_clip(tmp_path / "clip", seed=0)
    profile = load_models()
    cfg = profile.model_copy(
        update={"visual_embedder": RoleConfig(backend="open_clip", model=TINY_CLIP_ARCH, pretrained=str(weights), device="cpu")}
    )
    models = ModelSet(cfg)
    store = picture_store(tmp_path / "s", [_solid((200, 30, 30)), _shape((30, 30, 200), "box"), text_picture("EXIT")])
    ctx = StageContext(store, PipelineConfig(), lambda: models, show_progress=False)
    assert MemoryStage("visual").run(ctx, [VideoSource(Path("v.mp4"), "v")]).done == 3
    rows = _rows(store)
    assert {r["embedder"] for r in rows} == {f"open_clip:{TINY_CLIP_ARCH}@{weights}:{TINY_CLIP['embed_dim']}"}
    frames = [open_frame(store.root, p) for p in json.loads(rows[1]["frames_json"])]
    mean = models.visual_embedder.embed_images(frames).mean(axis=0)
    assert np.allclose(np.frombuffer(rows[1]["vector"], np.float32), mean / np.linalg.norm(mean), atol=1e-5)
    found = VisualMemory(store, models).retrieve("a blue box", 3)
    assert len(found) == 3 and sorted(e.t_start for e in found) == [0, 10, 20] and all(len(e.frames) == 2 for e in found)
    assert MemoryStage("visual").run(ctx, [VideoSource(Path("v.mp4"), "v")]).done == 0


# ------------------------------------------------------------------ configuration and CLI


@pytest.mark.parametrize(
    "text,needle",
    [
        ("visual: {fps: 0}\n", "visual.fps: Input should be greater than 0 (got 0)"),
        ("visual: {max_frames: 1000}\n", "visual.max_frames: Input should be less than or equal to 256"),
        ("visual: {inspect: -1}\n", "visual.inspect"),
        ("visual: {frames: 8}\n", "visual.frames: Extra inputs are not permitted"),
    ],
)
def test_bad_visual_settings_are_one_line(tmp_path: Path, text: str, needle: str) -> None:
    path = tmp_path / "agent.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_agent(path)
    assert needle in str(info.value) and "\n" not in str(info.value)


def test_visual_embedder_profile_errors_are_one_line(tmp_path: Path) -> None:
    roles = "vlm: {backend: offline}\nllm: {backend: offline}\ntext_embedder: {backend: offline}\n"
    path = tmp_path / "models.yaml"
    path.write_text(roles + "visual_embedder: {backend: sentence_transformers, model: m}\n")
    with pytest.raises(ConfigError, match="visual_embedder.backend must be open_clip or offline") as info:
        load_models(path)
    assert "\n" not in str(info.value)
    path.write_text(roles + "visual_embedder: {backend: offline, options: {threshold: 0.2}}\n")
    with pytest.raises(ConfigError, match=r"visual_embedder.options: the offline backend takes no options"):
        assert ModelSet(load_models(path)).visual_embedder is None
    path.write_text("name: models\n" + roles)
    with pytest.raises(ConfigError, match="models profile 'models' has no visual_embedder") as info:
        VisualMemory(hand_store(tmp_path / "s", [None]), ModelSet(load_models(path))).retrieve("red", 1)
    assert "\n" not in str(info.value)


def test_search_and_info_show_visual_memory(picture_memory, run_cli) -> None:
    store, _ = picture_memory
    found = run_cli("search", "lighthouse", "--store", store.root, "--memory", "visual", "--json", "-k", "2")
    assert found.code == 0, found.output
    best = json.loads(found.stdout)[0]
    assert (best["memory"], best["source"], best["t_start"]) == ("visual", "visual", 30)
    assert best["frames"] == ["frames/v/00003_0.jpg", "frames/v/00003_1.jpg"]

    ranged = run_cli("search", "00:00:10 - 00:00:30", "--store", store.root, "--memory", "visual")
    assert ranged.code == 0 and ranged.stdout.startswith("1. v 00:00:10-00:00:30 (1.000) 4 frames at 00:00:12, ")
    assert "frames/v/00001_0.jpg" in ranged.stdout
    bad = run_cli("search", "00:00:30 - 00:00:10", "--store", store.root, "--memory", "visual")
    assert bad.code == 2 and "ends before it starts" in bad.stderr and bad.stderr.count("\n") == 1

    info = run_cli("info", "--store", store.root)
    assert "memory visual: segments 5, frames 10, embedder offline:default:384" in info.stdout
