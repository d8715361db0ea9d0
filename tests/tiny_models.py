"""Tiny randomly initialised models built on the spot, so backend tests need no download.

The weights are random (fixed seed), so what they generate is noise; tests use them to check
plumbing — that prompts and images reach the model and tokens come back — never quality.
"""

from __future__ import annotations

import json
from pathlib import Path

from videomem.models.random_weights import CHAT_TEMPLATE, SPECIAL_TOKENS, train_tokenizer

TINY_CLIP_ARCH = "videomem-tiny-clip"
TINY_CLIP = {
    "embed_dim": 16,
    "vision_cfg": {"image_size": 32, "layers": 1, "width": 32, "patch_size": 16, "head_width": 16},
    "text_cfg": {"context_length": 16, "vocab_size": 49408, "width": 32, "heads": 2, "layers": 1},
}


def build_tiny_clip(directory: Path, seed: int = 0) -> Path:
    """Register the tiny open_clip architecture `TINY_CLIP_ARCH` (its config in `directory`)
    and save random weights for it there; returns the weights file (open_clip's `pretrained`)."""
    import open_clip
    import torch

    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"{TINY_CLIP_ARCH}.json").write_text(json.dumps(TINY_CLIP))
    open_clip.add_model_config(directory)
    torch.manual_seed(seed)
    model = open_clip.create_model(TINY_CLIP_ARCH, pretrained=None)
    path = directory / f"tiny-clip-seed{seed}.pt"
    torch.save(model.state_dict(), path)
    return path


PATCH = 14
MERGE = 2
IMAGE_SIDE = PATCH * MERGE * 2
"""Images are resized to about 56 × 56 pixels in multiples of 28: a square frame becomes a
4 × 4 patch grid, merged 2 × 2 into 4 image tokens; a 4:3 frame a 2 × 4 grid (2 tokens)."""


def _tokenizer():
    corpus = ["You describe video clips. Reply with one JSON object: caption, objects, answer, summary."]
    return train_tokenizer(400, corpus * 4)


def build_tiny_qwen2_vl(directory: Path, seed: int = 0) -> Path:
    """Save a tiny Qwen2-VL (processor + random weights) to `directory`, loadable by
    AutoProcessor / AutoModelForImageTextToText like a hub checkpoint."""
    import torch
    from transformers import (
        Qwen2VLConfig,
        Qwen2VLForConditionalGeneration,
        Qwen2VLImageProcessor,
        Qwen2VLProcessor,
        Qwen2VLVideoProcessor,
    )

    tokenizer = _tokenizer()
    ids = {token: tokenizer.convert_tokens_to_ids(token) for token in SPECIAL_TOKENS}
    pixels = IMAGE_SIDE * IMAGE_SIDE
    processor = Qwen2VLProcessor(
        image_processor=Qwen2VLImageProcessor(min_pixels=pixels, max_pixels=pixels, patch_size=PATCH, merge_size=MERGE),
        tokenizer=tokenizer,
        video_processor=Qwen2VLVideoProcessor(),
        chat_template=CHAT_TEMPLATE,
    )
    config = Qwen2VLConfig(
        text_config={
            "hidden_size": 32,
            "intermediate_size": 64,
            "num_hidden_layers": 1,
            "num_attention_heads": 2,
            "num_key_value_heads": 1,
            "vocab_size": len(tokenizer),
            "max_position_embeddings": 1024,
            # head_dim 16: the rotary half (8) splits into time, height, width sections.
            "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [4, 2, 2]},
            "bos_token_id": ids["<|endoftext|>"],
            "eos_token_id": ids["<|im_end|>"],
            "pad_token_id": ids["<|endoftext|>"],
        },
        vision_config={
            "depth": 1,
            "embed_dim": 32,
            "hidden_size": 32,
            "num_heads": 2,
            "mlp_ratio": 2,
            "patch_size": PATCH,
            "spatial_merge_size": MERGE,
            "temporal_patch_size": 2,
        },
        image_token_id=ids["<|image_pad|>"],
        video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"],
        vision_end_token_id=ids["<|vision_end|>"],
    )
    torch.manual_seed(seed)
    model = Qwen2VLForConditionalGeneration(config).eval()
    directory.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(directory)
    processor.save_pretrained(directory)
    return directory
