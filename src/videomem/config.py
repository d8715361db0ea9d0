"""The user's three knobs, as pydantic models: pipeline × models × agent.

Code reads profiles (the shipped ones in the package's `profiles/pipelines`, `profiles/models`
and `profiles/agents`, or a YAML file the user names) only through this module, so
a bad value is caught once, at load time, with one line naming the file, the key and what is
allowed, instead of surfacing as a KeyError deep inside a stage.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from videomem import core
from videomem.errors import ConfigError

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

ProfileKind = Literal["pipelines", "models", "agents"]

DEFAULT_PROFILES: dict[str, str] = {"pipelines": "default", "models": "offline", "agents": "telemem"}
"""The shipped profile each kind loads when none is given."""

SERVE_PORT = 8750
"""`videomem serve`'s default port: not 8000, where `vllm serve` (and the GPU profiles' base_url) listen."""

PIPELINE_STAGES = ("sample", "transcribe", "caption")
"""The pipeline's own stages, in the order they run, before every memory's build. Each other
stage is a memory's build, named as the memory; memory/registry.py orders those."""
CAPTIONED = "events"
"""The memory the caption stage fills: it has no build of its own, so no stage of its name."""


def stage_names() -> tuple[str, ...]:
    """Every stage a pipeline may list: the pipeline's own, then one per memory but the one the
    caption stage fills, in the registry's order (names only: this layer is below the memories)."""
    return PIPELINE_STAGES + tuple(m for m in core.MEMORY_NAMES if m != CAPTIONED)


def check_stages(stages: Sequence[str]) -> tuple[str, ...]:
    """`stages` as given; ValueError naming the first one that does not exist (the one check of
    stage names: pipeline profiles, `ingest --stages`, the server's ingest requests)."""
    allowed = stage_names()
    unknown = [s for s in stages if s not in allowed]
    if unknown:
        raise ValueError(f"unknown stage {unknown[0]!r}; allowed: {', '.join(allowed)}")
    return tuple(stages)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PipelineConfig(_Strict):
    """How a video becomes memory: clip length, frames, time scales, stages."""

    name: str = "default"
    clip_seconds: float = Field(10.0, gt=0, description="length of one clip (TeleMem: 10 s)")
    frames_per_clip: int = Field(2, ge=1, le=64)
    frame_max_side: int = Field(640, ge=64, le=4096, description="longest side of stored JPEGs")
    jpeg_quality: int = Field(85, ge=10, le=100)
    keyframe_tolerance: float = Field(
        2.0,
        ge=0,
        description="seconds a sampled frame may move to reach a keyframe (0 = exact timestamps)",
    )
    stages: tuple[str, ...] = Field(
        default_factory=stage_names,
        description="the stages to run, in any order: they run in the registry's order (memory/registry.py)",
    )
    episodic_scales: tuple[float, ...] = (10.0, 30.0, 180.0, 600.0)
    semantic_segment_seconds: float = Field(300.0, gt=0)
    visual_segment_seconds: float = Field(10.0, gt=0)
    caption_batch_size: int = Field(8, ge=1)
    object_batch_size: int = Field(32, ge=1, description="records per consolidation batch")
    object_summary_records: int = Field(
        512, ge=1,
        description="records linked before the changed objects' summaries are folded and all is written at once "
        "(a killed run redoes at most these)",
    )
    object_merge_threshold: float = Field(
        0.75, gt=0, le=1, description="cosine similarity above which the model is asked to merge"
    )
    episodic_batch_size: int = Field(32, ge=1, description="episodic windows per batch of model calls")
    episodic_synonym_threshold: float = Field(
        0.8, gt=0, le=1, description="entity-embedding cosine from which two graph entities get a synonym edge"
    )
    imported_caption_language: str | None = Field(
        None,
        min_length=2,
        description="translate imported captions (ingest --captions) into this language with the text model; "
        "unset: keep them as written",
    )
    transcribe_chunk_seconds: float = Field(
        300.0, ge=1, description="seconds of audio the transcribe stage holds and commits at a time"
    )
    speech_source: Literal["sidecar", "asr"] = Field(
        "sidecar",
        description="a video with a transcript of its own (sidecar file or --transcripts import): keep it and "
        "do not transcribe (sidecar), or transcribe and replace those rows (asr)",
    )
    min_support_segments: int = Field(
        2, ge=1, description="semantic segments an offline-induced habit or preference must recur in"
    )
    semantic_merge_threshold: float = Field(
        0.6, gt=0, le=1, description="cosine similarity from which a semantic triplet goes to consolidation"
    )
    ray_vision_actors: int = Field(
        1, ge=1, description="ingest --ray: actors holding the vision model (one per GPU for a GPU profile)"
    )
    ray_embed_actors: int = Field(1, ge=1, description="ingest --ray: actors holding the visual embedder")
    ray_vision_batch_size: int | None = Field(
        None,
        ge=1,
        description="ingest --ray: clips per call to a vision actor; unset: the engine's own window (vLLM, "
        "transformers), else caption_batch_size",
    )

    @field_validator("stages")
    @classmethod
    def _known_stages(cls, stages: tuple[str, ...]) -> tuple[str, ...]:
        check_stages(stages)
        if len(set(stages)) != len(stages):
            raise ValueError("a stage is listed twice")
        return tuple(s for s in stage_names() if s in stages)

    @field_validator("episodic_scales")
    @classmethod
    def _increasing(cls, scales: tuple[float, ...]) -> tuple[float, ...]:
        if not scales or any(s <= 0 for s in scales) or list(scales) != sorted(set(scales)):
            raise ValueError("must be positive seconds in strictly increasing order")
        return scales


Backend = Literal["offline", "openai", "vllm", "transformers", "open_clip", "sentence_transformers", "faster_whisper"]


class RoleConfig(_Strict):
    """One model role (vlm, llm, text_embedder, visual_embedder) and the backend that fills it."""

    backend: Backend
    model: str | None = Field(None, description="hub id, local path, or served model name")
    base_url: str | None = None
    api_key_env: str | None = Field(None, description="environment variable holding the API key")
    pretrained: str | None = Field(None, description="open_clip pretrained tag or weights path")
    device: str | None = None
    dtype: str | None = None
    max_tokens: int = Field(512, ge=1)
    temperature: float | None = Field(
        None,
        ge=0,
        le=2,
        description="sampling temperature; unset: the openai backend sends none (the server's default, the only "
        "one reasoning models accept) and local engines decode greedily",
    )
    batch_size: Annotated[int, Field(ge=1)] | Literal["auto"] = Field(
        8, description="requests per model call; 'auto' (transformers): the largest batch free GPU memory holds"
    )
    concurrency: int = Field(8, ge=1)
    timeout_s: float = Field(120.0, gt=0, description="seconds one attempt may wait for an answer")
    deadline_s: float = Field(
        240.0, gt=0, description="seconds one request may take in all, retries and backoff included"
    )
    max_retries: int = Field(3, ge=0, le=10)
    json_repairs: int = Field(2, ge=0, le=5, description="re-asks after malformed JSON output")
    structured_output: bool = Field(
        True,
        description="send response_format json_schema (false: a server without constrained decoding; the schema "
        "then goes in the prompt only)",
    )
    max_images: int | None = Field(
        None,
        ge=1,
        description="most images one request may carry: the engine's image limit (vLLM's limit_mm_per_prompt "
        "image); tools that send frames send at most this many, chosen evenly over their range",
    )
    options: dict[str, Any] = Field(default_factory=dict, description="backend-specific extras")

    @model_validator(mode="after")
    def _needs_model(self) -> RoleConfig:
        if self.backend not in ("offline",) and not self.model:
            raise ValueError(f"backend {self.backend!r} needs 'model'")
        if self.backend == "openai" and not self.base_url:
            raise ValueError("backend 'openai' needs 'base_url' (e.g. http://localhost:8000/v1)")
        if self.batch_size == "auto" and self.backend != "transformers":
            raise ValueError("batch_size 'auto' is for the transformers backend; give a number")
        return self


class ModelsConfig(_Strict):
    """Which backend fills each role. `visual_embedder` is optional: without one a profile
    cannot build or search visual memory."""

    name: str = "offline"
    vlm: RoleConfig
    llm: RoleConfig
    text_embedder: RoleConfig
    visual_embedder: RoleConfig | None = None
    asr: RoleConfig | None = Field(
        None, description="speech model of the transcribe stage; without one it records when speech is heard"
    )
    question_deadline_s: float = Field(
        600.0, gt=0, description="seconds the agent may spend on one question; checked between model calls"
    )

    @model_validator(mode="before")
    @classmethod
    def _shared_engine_images(cls, data: Any) -> Any:
        """An in-process vLLM llm of the vlm's model shares the vlm's engine, so it takes the vlm's
        image limit (engines are shared only when their arguments match)."""
        if not isinstance(data, dict):
            return data
        vlm, llm = data.get("vlm"), data.get("llm")
        if (
            isinstance(vlm, dict) and isinstance(llm, dict) and "max_images" in vlm and "max_images" not in llm
            and vlm.get("backend") == llm.get("backend") == "vllm" and vlm.get("model") == llm.get("model")
        ):
            data = {**data, "llm": {**llm, "max_images": vlm["max_images"]}}
        return data

    @model_validator(mode="after")
    def _role_backends(self) -> ModelsConfig:
        generative = {"offline", "openai", "vllm", "transformers"}
        for role in ("vlm", "llm"):
            backend = getattr(self, role).backend
            if backend not in generative:
                raise ValueError(f"{role}.backend {backend!r} cannot generate; allowed: {sorted(generative)}")
        if self.text_embedder.backend not in {"offline", "sentence_transformers", "openai"}:
            raise ValueError("text_embedder.backend must be offline, sentence_transformers or openai")
        if self.visual_embedder and self.visual_embedder.backend not in {"open_clip", "offline"}:
            raise ValueError("visual_embedder.backend must be open_clip or offline")
        if self.asr and self.asr.backend not in {"faster_whisper", "transformers", "openai"}:
            raise ValueError("asr.backend must be faster_whisper, transformers or openai")
        return self


VIDEO_TOOLS = ("video.retrieval", "video.rag", "video.qa")
"""TeleMem's tools; every memory adds `memory.<name>` (see memory/registry.py)."""


def tool_name(memory: str) -> str:
    """The agent's tool over one memory: `memory.events`, `memory.episodic`, ..."""
    return f"memory.{memory}"


def tool_names() -> tuple[str, ...]:
    """Every tool an agent profile may enable."""
    return VIDEO_TOOLS + tuple(tool_name(m) for m in core.MEMORY_NAMES)


class EpisodicSettings(_Strict):
    """How episodic memory answers a query (WorldMM Sec. 3.2, PPR as in HippoRAG 2)."""

    per_scale_k: int = Field(5, ge=1, le=100, description="captions each time scale proposes to the re-rank")
    damping: float = Field(0.5, gt=0, lt=1, description="PPR: probability of following an edge rather than restarting")
    passage_node_weight: float = Field(
        0.05, ge=0, le=1, description="PPR restart weight of captions (by query similarity) next to entity seeds"
    )
    linking_top_k: int = Field(5, ge=1, le=100, description="facts and entities closest to the query that seed PPR")


class SemanticSettings(_Strict):
    """How semantic memory answers a query (WorldMM Sec. 3.2: PPR, edge score = PPR(subject) + PPR(object))."""

    top_k: int = Field(10, ge=1, le=100, description="triplets returned per query")
    damping: float = Field(0.5, gt=0, lt=1, description="PPR: probability of following an edge rather than restarting")
    linking_top_k: int = Field(5, ge=1, le=100, description="triplets closest to the query whose entities seed PPR")


class VisualSettings(_Strict):
    """How `memory.visual` reads visual memory (WorldMM's time-range access and segment search)."""

    fps: float = Field(1.0, gt=0, le=30, description="most frames per second a time range returns")
    max_frames: int = Field(64, ge=1, le=256, description="most frames a time range returns")
    inspect: int = Field(
        1, ge=0, le=5, description="best segments of a text query the VLM looks at with the question (0: none)"
    )


class AgentConfig(_Strict):
    """How questions are answered: the ReAct agent, WorldMM's retrieval and response agents, or
    one-shot caption RAG as a baseline. A `worldmm` agent chooses among the memories of its
    `memory.*` tools, one per round, for at most `max_steps` rounds."""

    name: str = "telemem"
    kind: Literal["react", "worldmm", "caption_rag"] = "react"
    rag_query: Literal["question_and_options", "question"] = Field(
        "question_and_options",
        description="caption_rag: retrieve with the question and its options (the agent's first query) or the question",
    )
    tools: tuple[str, ...] = VIDEO_TOOLS
    lexical: bool = Field(
        True,
        description="event captions, episodic windows and timeline facts are found by keywords (BM25) as well "
        "as by meaning, the two rankings fused; false: by meaning alone",
    )
    recency_half_life_hours: float | None = Field(
        24.0,
        gt=0,
        description="a question asked at a moment (--until, EgoLifeQA's query time) finds event captions, object "
        "observations and episodic windows by relevance and recency together, recency halving every this many hours "
        "(memory/recency.py); null: by relevance alone",
    )
    max_steps: int = Field(5, ge=1, le=30)
    call_retries: int = Field(2, ge=0, le=5, description="re-asks after a malformed tool call")
    top_k: int = Field(5, ge=1, le=100)
    qa_max_frames: int = Field(8, ge=1, le=64)
    qa_fps: float = Field(1.0, gt=0, le=30)
    episodic: EpisodicSettings = EpisodicSettings()
    semantic: SemanticSettings = SemanticSettings()
    visual: VisualSettings = VisualSettings()

    @field_validator("tools")
    @classmethod
    def _known_tools(cls, tools: tuple[str, ...]) -> tuple[str, ...]:
        allowed = tool_names()
        unknown = [t for t in tools if t not in allowed]
        if unknown:
            raise ValueError(f"unknown tool {unknown[0]!r}; allowed: {', '.join(allowed)}")
        if len(set(tools)) != len(tools):
            raise ValueError("a tool is listed twice")
        return tools

    @model_validator(mode="after")
    def _worldmm_memories(self) -> AgentConfig:
        if self.kind == "worldmm" and not any(t.startswith("memory.") for t in self.tools):
            raise ValueError("a worldmm agent needs at least one memory.<name> tool to choose from")
        return self


Config = TypeVar("Config", bound=BaseModel)


MAX_PROFILE_BYTES = 1 << 20
"""A profile is a few kilobytes; a larger file is not one (and would take seconds to parse)."""


_KEY_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")


def _format_error(path: Path, err: ValidationError) -> str:
    """One line naming the key and the problem. Other text of the file is never echoed, since a
    server may be asked to load a file its client cannot read: a value is shown only when it is
    a number or a boolean (what range checks reject), a key only when it is a short name."""
    first = err.errors()[0]
    key = ".".join(str(p) if isinstance(p, int) or _KEY_NAME.fullmatch(p) else "<key>" for p in first["loc"])
    key = key or "(top level)"
    message = first["msg"].removeprefix("Value error, ")
    got = first.get("input")
    shown = f" (got {got!r})" if isinstance(got, (bool, int, float)) and first["type"] != "missing" else ""
    more = f" [+{err.error_count() - 1} more]" if err.error_count() > 1 else ""
    return f"{path}: {key}: {message}{shown}{more}"


def load_yaml(path: str | Path | Traversable, model: type[Config]) -> Config:
    """Load and validate one profile; any problem is a one-line ConfigError that quotes no text
    of the file."""
    path = Path(path) if isinstance(path, str) else path
    if not path.is_file():
        raise ConfigError(f"{path}: no such file")
    if isinstance(path, Path) and path.stat().st_size > MAX_PROFILE_BYTES:
        raise ConfigError(f"{path}: larger than {MAX_PROFILE_BYTES >> 20} MiB, not a profile")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text") from None
    except yaml.MarkedYAMLError as exc:
        where = f" line {exc.problem_mark.line + 1}" if exc.problem_mark else ""
        raise ConfigError(f"{path}:{where} not valid YAML ({exc.problem})") from None
    except yaml.YAMLError:
        raise ConfigError(f"{path}: not valid YAML") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot be read ({exc.strerror})") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of keys, got {type(data).__name__}")
    try:
        return model.model_validate(data)
    except ValidationError as err:
        raise ConfigError(_format_error(path, err)) from None


def _shipped_folder(kind: ProfileKind) -> Traversable:
    return resources.files("videomem") / "profiles" / kind


def shipped_profiles(kind: ProfileKind) -> list[str]:
    """Names of the profiles of this kind that ship with the package (`videomem profiles`)."""
    return sorted(f.name.removesuffix(".yaml") for f in _shipped_folder(kind).iterdir() if f.name.endswith(".yaml"))


def default_path(kind: ProfileKind, name: str) -> Traversable:
    """The shipped profile `name` of this kind (package data, read through importlib.resources)."""
    if name not in shipped_profiles(kind):
        raise ConfigError(f"no shipped {kind} profile {name!r}; shipped: {', '.join(shipped_profiles(kind))}")
    return _shipped_folder(kind) / f"{name}.yaml"


def profile_path(kind: ProfileKind, given: str | Path | Traversable | None) -> Path | Traversable:
    """Where the profile to load is: a file given on the command line wins; otherwise a name
    (`worldmm`) or the profile's path inside the package's profiles (`agents/worldmm.yaml`)
    is a shipped profile; nothing given is the kind's default."""
    if not given:
        return default_path(kind, DEFAULT_PROFILES[kind])
    if not isinstance(given, (str, Path)):
        return given
    path = Path(given)
    if path.is_file():
        return path
    if len(path.parts) == 1 and not path.suffix:
        return default_path(kind, path.name)
    if path.parts == (kind, path.name) and path.suffix == ".yaml" and path.stem in shipped_profiles(kind):
        return default_path(kind, path.stem)
    return path


def load_pipeline(path: str | Path | Traversable | None = None) -> PipelineConfig:
    return load_yaml(profile_path("pipelines", path), PipelineConfig)


def load_models(path: str | Path | Traversable | None = None) -> ModelsConfig:
    return load_yaml(profile_path("models", path), ModelsConfig)


def load_agent(path: str | Path | Traversable | None = None) -> AgentConfig:
    return load_yaml(profile_path("agents", path), AgentConfig)
