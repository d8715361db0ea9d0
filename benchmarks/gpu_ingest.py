"""GPU ingest throughput: the clip stages' VLM work for N clips, against a roofline.

A Qwen2.5-VL of a real shape (3B or 7B; `--tiny` on the CPU) is built with random weights
(fixed seed, `tests/random_weights.py`) and saved like a hub checkpoint, then loaded by
the `transformers` backend exactly as the shipped profile `models/hf-qwen2.5-vl-3b.yaml` says
(its vlm role, only `model` pointed at the saved directory). Each clip is 2 frames of 640 × 360
(seeded noise) and goes out as the request the caption stage sends when it builds both memories
(`describe_clip`: caption and object records in one pass); the requests of all clips are handed
to the engine in the windows the stage uses (`batching`). Random weights never emit an
end-of-sequence token, so every clip decodes exactly `--new-tokens` tokens.

The run is timed twice: as is, and with one new token (prefill only); decode = the difference.
Roofline: a clip needs 2 × parameters × tokens FLOPs (vision tower on its patches, language model
on prompt and completion) at the device's peak, and its decode reads its KV cache once per step
plus the weights once per step of a batch of AUTO_MAX_BATCH at the device's memory bandwidth; the
roofline is one clip per max(compute time, memory time). Peaks: the datasheet figures of known
GPUs (H100, H200, A100), else measured (a bf16 matmul and a device copy); on the CPU (`--tiny`)
measured the same way in float32. Without CUDA and without `--tiny` it says so and exits 0.

Clip times differ, so prompts differ by a few tokens and every batch is left-padded; the decode
then attends with a padding mask, under which transformers' SDPA path repeats the KV heads of a
grouped-query model in every layer (its GQA kernel needs no mask). `--same-length` puts every clip
at 0 s, so no batch is padded: the two runs' decode tokens/s give what padding costs. `--attn`
sets the attention implementation (`options.attn_implementation`).

Last line: `gpu ingest: N.N clips/s, M% of roofline`.
Target (issue 12): ≥ 15 clips/s and ≥ 33% of roofline for the 3B shape on one H100.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import torch
import yaml
from PIL import Image

from videomem.core import tune_process

tune_process()  # an entry point like `videomem`: OpenMP threads sleep while they wait (set before torch loads)

from videomem.config import RoleConfig, default_path
from videomem.models.engines import VLRequest
from videomem.models.usage import UsageMeter
from videomem.core import ClipView
from videomem.models.hf_transformers import AUTO_MAX_BATCH, TransformersEngine
from videomem.models.prompted import PromptedVision

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # random checkpoints are test tooling
from random_weights import save_random_qwen2_5_vl  # noqa: E402

PROFILE = default_path("models", "hf-qwen2.5-vl-3b")
CLIP_SECONDS = 10.0
DATASHEETS = {  # bf16 dense FLOP/s, memory bytes/s
    "H100 SXM": (989e12, 3.35e12),
    "H100 NVL": (835e12, 3.9e12),
    "H100 PCIe": (756e12, 2.0e12),
    "H100": (989e12, 3.35e12),
    "H200": (989e12, 4.8e12),
    "A100-SXM4-80GB": (312e12, 2.04e12),
    "A100": (312e12, 1.55e12),
}


def measured_peaks(device: torch.device, dtype: torch.dtype) -> tuple[float, float]:
    """(FLOP/s of a large matmul, bytes/s of a large copy) on `device`."""
    side = 4096 if device.type == "cuda" else 1024
    a = torch.randn(side, side, device=device, dtype=dtype)
    b = torch.randn(side, side, device=device, dtype=dtype)
    src = torch.empty(64 * 2**20, device=device, dtype=torch.uint8)
    dst = torch.empty_like(src)

    def timed(work, repeat: int) -> float:
        work()
        if device.type == "cuda":
            torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(repeat):
            work()
        if device.type == "cuda":
            torch.cuda.synchronize()
        return (time.perf_counter() - start) / repeat

    flops = 2 * side**3 / timed(lambda: a @ b, 10)
    bandwidth = 2 * src.numel() / timed(lambda: dst.copy_(src), 10)
    return flops, bandwidth


def peaks(device: torch.device, dtype: torch.dtype) -> tuple[float, float, str]:
    if device.type == "cuda":
        name = torch.cuda.get_device_name(device)
        for key, figures in DATASHEETS.items():
            if key in name:
                return *figures, f"{name} datasheet"
        return *measured_peaks(device, dtype), f"{name} measured"
    return *measured_peaks(device, dtype), "CPU measured (float32)"


def clip_views(n: int, frames: int, size: tuple[int, int], same_time: bool = False, seed: int = 0) -> list[ClipView]:
    """`n` consecutive clips of seeded noise; with `same_time` all at 0 s, so that every prompt
    has the same length and no batch is padded."""
    rng = np.random.default_rng(seed)
    views = []
    for i in range(n):
        images = [Image.fromarray(rng.integers(0, 256, (size[1], size[0], 3), dtype=np.uint8)) for _ in range(frames)]
        t0 = 0.0 if same_time else i * CLIP_SECONDS
        times = [t0 + (k + 0.5) * CLIP_SECONDS / frames for k in range(frames)]
        views.append(ClipView("bench", t0, t0 + CLIP_SECONDS, images, times))
    return views


def role(
    model_dir: Path, tiny: bool, new_tokens: int, batch_size: str | None, static_cache: bool, attention: str | None = None
) -> RoleConfig:
    """The shipped profile's vlm role, pointed at the random checkpoint."""
    fields = yaml.safe_load(PROFILE.read_text())["vlm"] | {"model": str(model_dir), "max_tokens": new_tokens}
    if static_cache:
        fields["options"] = fields.get("options", {}) | {"generate": {"cache_implementation": "static"}}
    if attention is not None:
        fields["options"] = fields.get("options", {}) | {"attn_implementation": attention}
    if tiny:
        fields |= {"device": "cpu", "dtype": "float32"}
    if batch_size is not None:
        fields["batch_size"] = batch_size if batch_size == "auto" else int(batch_size)
    return RoleConfig.model_validate(fields)


def run(engine: TransformersEngine, requests: list[VLRequest], window: int) -> float:
    if engine.model.device.type == "cuda":
        torch.cuda.synchronize()
    start = time.perf_counter()
    for i in range(0, len(requests), window):
        engine.generate(requests[i : i + window])
    if engine.model.device.type == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter() - start


def parameters(model: torch.nn.Module) -> tuple[int, int]:
    """(vision tower, everything else) parameter counts."""
    vision = sum(p.numel() for name, p in model.named_parameters() if ".visual." in f".{name}")
    return vision, sum(p.numel() for p in model.parameters()) - vision


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="tiny model on the CPU (CI-like machines)")
    parser.add_argument("--shape", choices=["3b", "7b"], default="3b")
    parser.add_argument("--clips", type=int, default=None, help="default: 512 on a GPU, 16 with --tiny")
    parser.add_argument("--new-tokens", type=int, default=None, help="default: 128 on a GPU, 32 with --tiny")
    parser.add_argument("--frames", type=int, default=2)
    parser.add_argument("--size", default="640x360", help="frame width x height")
    parser.add_argument("--batch-size", default=None, help="override the profile's batch_size (a number or auto)")
    parser.add_argument("--static-cache", action="store_true", help="options.generate: static KV cache")
    parser.add_argument("--attn", default=None, help="options.attn_implementation (sdpa, eager, flash_attention_2, ...)")
    parser.add_argument(
        "--same-length",
        action="store_true",
        help="every clip at the same time, so no batch is padded: decode then runs with no attention mask "
        "(compare decode tokens/s with a run without it to see what padding costs)",
    )
    parser.add_argument("--work", type=Path, default=Path("/tmp/videomem-gpu-ingest"), help="checkpoint cache")
    args = parser.parse_args()

    if not args.tiny and not torch.cuda.is_available():
        print("gpu ingest: no CUDA device here; run with --tiny for the CPU check (nothing measured)")
        sys.exit(0)
    shape = "tiny" if args.tiny else args.shape
    n = args.clips or (16 if args.tiny else 512)
    args.new_tokens = args.new_tokens or (32 if args.tiny else 128)
    width, height = (int(v) for v in args.size.split("x"))

    model_dir = args.work / f"qwen2.5-vl-{shape}"
    if not (model_dir / "config.json").is_file():
        start = time.perf_counter()
        save_random_qwen2_5_vl(model_dir, shape, device="cpu" if args.tiny else "cuda")
        print(f"built and saved the random {shape} checkpoint in {time.perf_counter() - start:.0f} s")
    cfg = role(model_dir, args.tiny, args.new_tokens, args.batch_size, args.static_cache, args.attn)
    meter = UsageMeter()
    engine = TransformersEngine(cfg, "vlm", meter)
    vision = PromptedVision(engine, cfg)
    window = vision.batching(8).size
    device = engine.model.device
    vision_params, text_params = parameters(engine.model)
    print(f"model: Qwen2.5-VL {shape} shape, {(vision_params + text_params) / 1e6:,.2f} M parameters "
          f"({vision_params / 1e6:,.2f} M vision), {engine.model.dtype}, {device}, "
          f"attention {engine.model.config._attn_implementation}, batch_size {cfg.batch_size}")

    views = clip_views(n, args.frames, (width, height), args.same_length)
    requests = vision.clip_requests("describe_clip", views)
    text_lengths = [len(engine.tokenizer(r.prompt)["input_ids"]) for r in requests]
    engine.generate(requests[: min(4, n)])  # warm-up: kernels, allocator
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    before = meter.total()
    wall = run(engine, requests, window)
    used = meter.total() - before
    peak = torch.cuda.max_memory_allocated(device) / 1e9 if device.type == "cuda" else None
    prefill = run(engine, [VLRequest(r.prompt, r.images, r.system, r.json_schema, 1) for r in requests], window)
    decode = max(wall - prefill, 0.0)

    prompt_tokens = used.prompt_tokens / n
    new_tokens = used.completion_tokens / n
    patches = engine.model.config.vision_config.spatial_merge_size ** 2 * (
        prompt_tokens - len(engine.tokenizer(requests[0].prompt)["input_ids"])
    )
    flop, bandwidth, source = peaks(device, engine.model.dtype)
    width_bytes = engine.model.dtype.itemsize
    text = engine.model.config.text_config
    kv_per_token = 2 * text.num_hidden_layers * text.num_key_value_heads * (text.hidden_size // text.num_attention_heads) * width_bytes
    compute = (2 * text_params * (prompt_tokens + new_tokens) + 2 * vision_params * max(patches, 0.0)) / flop
    memory = new_tokens * (kv_per_token * (prompt_tokens + new_tokens / 2) + width_bytes * text_params / AUTO_MAX_BATCH) / bandwidth
    roofline = 1.0 / max(compute, memory)
    rate = n / wall

    print(f"clips: {n} × {args.frames} frames of {width}×{height}, {args.new_tokens} new tokens, windows of {window}; "
          f"prompt text {min(text_lengths)}–{max(text_lengths)} tokens "
          f"({'batches padded' if min(text_lengths) < max(text_lengths) else 'no padding'})")
    print(f"throughput: {rate:.2f} clips/s, {rate * CLIP_SECONDS:.1f}× real time (10-s clips)")
    print(f"tokens per clip: {prompt_tokens:.0f} prompt + {new_tokens:.0f} completion; "
          f"decode {used.completion_tokens / max(decode, 1e-9):.0f} tokens/s")
    print(f"prefill / decode: {prefill:.2f} s / {decode:.2f} s of {wall:.2f} s "
          f"(prefill {used.prompt_tokens / max(prefill, 1e-9):.0f} prompt tokens/s)")
    print("peak GPU memory: " + (f"{peak:.1f} GB" if peak is not None else "n/a (CPU)"))
    print(f"roofline: {roofline:.1f} clips/s ({source}: {flop / 1e9:,.0f} GFLOP/s, {bandwidth / 1e9:.0f} GB/s; "
          f"compute {compute * 1e3:.2f} ms, memory {memory * 1e3:.2f} ms per clip)")
    print(f"gpu ingest: {rate:.1f} clips/s, {100 * rate / roofline:.0f}% of roofline")


if __name__ == "__main__":
    main()
