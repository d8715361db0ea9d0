"""Tiny randomly initialised models built on the spot, so backend tests need no download.

The weights are random (fixed seed), so what they generate is noise; tests use them to check
plumbing — that prompts and images reach the model and tokens come back — never quality.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from random_weights import CHAT_TEMPLATE, SPECIAL_TOKENS, save_checkpoint, train_tokenizer

TINY_CLIP_ARCH = "videomem-tiny-clip"
TINY_CLIP = {
    "embed_dim": 16,
    "vision_cfg": {"image_size": 32, "layers": 1, "width": 32, "patch_size": 16, "head_width": 16},
    "text_cfg": {"context_length": 16, "vocab_size": 49408, "width": 32, "heads": 2, "layers": 1},
}


def build_tiny_clip(directory: Path, seed: int = 0, quick_gelu: bool = False) -> Path:
    """Register the tiny open_clip architecture `TINY_CLIP_ARCH` (its config in `directory`)
    and save random weights for it there; returns the weights file (open_clip's `pretrained`).
    `quick_gelu`: the architecture `TINY_CLIP_ARCH-quickgelu` instead, with OpenAI CLIP's
    QuickGELU activation, as open_clip names such configs."""
    import open_clip
    import torch

    arch = TINY_CLIP_ARCH + ("-quickgelu" if quick_gelu else "")
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"{arch}.json").write_text(json.dumps(TINY_CLIP | ({"quick_gelu": True} if quick_gelu else {})))
    open_clip.add_model_config(directory)
    torch.manual_seed(seed)
    model = open_clip.create_model(arch, pretrained=None)
    path = directory / f"{arch.removeprefix('videomem-')}-seed{seed}.pt"
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


WHISPER_SPECIAL_TOKENS = [
    "<|endoftext|>",
    "<|startoftranscript|>",
    "<|translate|>",
    "<|transcribe|>",
    "<|startoflm|>",
    "<|startofprev|>",
    "<|nospeech|>",
    "<|notimestamps|>",
]
"""Whisper's English-only control tokens, in its order; timestamp tokens <|0.00|> … <|30.00|>
follow <|notimestamps|> (both transformers and faster-whisper count timestamps from there)."""


def _whisper_tokenizer():
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers
    from transformers import WhisperTokenizerFast

    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    bpe = Tokenizer(models.BPE(vocab={ch: i for i, ch in enumerate(alphabet)}, merges=[]))
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    bpe.add_special_tokens([AddedToken(t, special=True) for t in WHISPER_SPECIAL_TOKENS])
    bpe.add_tokens([AddedToken(f"<|{i * 0.02:.2f}|>", special=False) for i in range(1501)])
    return WhisperTokenizerFast(
        tokenizer_object=bpe,
        unk_token="<|endoftext|>",
        bos_token="<|endoftext|>",
        eos_token="<|endoftext|>",
        pad_token="<|endoftext|>",
    )


def build_tiny_whisper(directory: Path, seed: int = 0, init_std: float = 0.02) -> Path:
    """Save a tiny English-only Whisper (tokenizer, feature extractor, random weights) to
    `directory`, loadable by the transformers ASR pipeline like a hub checkpoint. With weights
    drawn wider than the usual `init_std` it writes text tokens, not only timestamps."""
    import torch
    from transformers import (
        GenerationConfig,
        WhisperConfig,
        WhisperFeatureExtractor,
        WhisperForConditionalGeneration,
    )

    tokenizer = _whisper_tokenizer()
    ids = {token: tokenizer.convert_tokens_to_ids(token) for token in WHISPER_SPECIAL_TOKENS}
    eot, sot = ids["<|endoftext|>"], ids["<|startoftranscript|>"]
    config = WhisperConfig(
        vocab_size=len(tokenizer),
        num_mel_bins=80,
        d_model=16,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=32,
        decoder_ffn_dim=32,
        max_source_positions=1500,
        max_target_positions=448,
        decoder_start_token_id=sot,
        bos_token_id=eot,
        eos_token_id=eot,
        pad_token_id=eot,
        suppress_tokens=[],
        begin_suppress_tokens=[eot],
        init_std=init_std,
    )
    torch.manual_seed(seed)
    model = WhisperForConditionalGeneration(config).eval()
    model.generation_config = GenerationConfig(
        decoder_start_token_id=sot,
        bos_token_id=eot,
        eos_token_id=eot,
        pad_token_id=eot,
        no_timestamps_token_id=ids["<|notimestamps|>"],
        is_multilingual=False,
        max_initial_timestamp_index=50,
        max_length=448,
        suppress_tokens=[],
        begin_suppress_tokens=[eot],
    )
    directory.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    WhisperFeatureExtractor(feature_size=80).save_pretrained(directory)
    return directory


def convert_to_ctranslate2(whisper_dir: Path, directory: Path) -> Path:
    """The tiny Whisper converted by ctranslate2's own converter, as faster-whisper loads it."""
    import ctranslate2

    converter = ctranslate2.converters.TransformersConverter(
        str(whisper_dir), copy_files=["tokenizer.json", "preprocessor_config.json"]
    )
    return Path(converter.convert(str(directory), quantization="float32", force=True))


QWEN3_PATCH = 16
"""Qwen3-VL's patch side; Qwen2.5-VL's is PATCH (14). Either way a square frame becomes a 4 × 4
patch grid, merged 2 × 2 into 4 image tokens."""

CONTRACT_TEXT = {
    "hidden_size": 32,
    "intermediate_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 2,
    "num_key_value_heads": 1,
    "head_dim": 16,
    "max_position_embeddings": 1024,
    "initializer_range": 0.5,
}
"""The language model of the contract-test VLMs. Weights drawn with std 0.5 and untied
embeddings: with the usual 0.02 and tied embeddings a random model repeats the prompt's last
token whatever came before it, so a padding or position error could not change what it writes."""


def _save_qwen_vl(
    directory: Path, seed: int, family: str, patch: int, rope: dict[str, Any], vision: dict[str, Any]
) -> Path:
    """A tiny Qwen VL of `family` ("Qwen2_5_VL" or "Qwen3VL": its config, model and processor
    classes) with random weights and the byte-level tokenizer, saved like a hub checkpoint."""
    import torch
    import transformers
    from transformers import Qwen2VLImageProcessor

    tokenizer = train_tokenizer(600)  # on the prompt files: prompts tokenise to realistic lengths
    ids = {token: tokenizer.convert_tokens_to_ids(token) for token in SPECIAL_TOKENS}
    side = patch * MERGE * 2
    video_processor = "Qwen3VLVideoProcessor" if family == "Qwen3VL" else "Qwen2VLVideoProcessor"
    processor = getattr(transformers, f"{family}Processor")(
        image_processor=Qwen2VLImageProcessor(
            min_pixels=side * side, max_pixels=side * side, patch_size=patch, merge_size=MERGE
        ),
        tokenizer=tokenizer,
        video_processor=getattr(transformers, video_processor)(),
        chat_template=CHAT_TEMPLATE,
    )
    config = getattr(transformers, f"{family}Config")(
        text_config=CONTRACT_TEXT | {
            "vocab_size": len(tokenizer),
            "rope_parameters": rope,
            "bos_token_id": ids["<|endoftext|>"],
            "eos_token_id": ids["<|im_end|>"],
            "pad_token_id": ids["<|endoftext|>"],
            "tie_word_embeddings": False,
        },
        vision_config={
            "depth": 2, "hidden_size": 32, "intermediate_size": 64, "num_heads": 2, "out_hidden_size": 32,
            "patch_size": patch, "spatial_merge_size": MERGE, "temporal_patch_size": 2,
        } | vision,
        image_token_id=ids["<|image_pad|>"],
        video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"],
        vision_end_token_id=ids["<|vision_end|>"],
        tie_word_embeddings=False,
    )
    torch.manual_seed(seed)
    model = getattr(transformers, f"{family}ForConditionalGeneration")(config).eval()
    return save_checkpoint(model, processor, directory)


def build_tiny_qwen2_5_vl(directory: Path, seed: int = 0) -> Path:
    """A tiny Qwen2.5-VL: windowed vision attention with one full-attention block, multimodal
    rotary sections."""
    rope = {"rope_type": "default", "rope_theta": 1000000.0, "mrope_section": [4, 2, 2]}
    vision = {"window_size": 56, "fullatt_block_indexes": [1], "hidden_act": "silu"}
    return _save_qwen_vl(directory, seed, "Qwen2_5_VL", PATCH, rope, vision)


def build_tiny_qwen3_vl(directory: Path, seed: int = 0) -> Path:
    """A tiny Qwen3-VL: interleaved multimodal rotary sections, learned vision position
    embeddings and a deepstack layer feeding vision features into the language model."""
    rope = {"rope_type": "default", "rope_theta": 5000000.0, "mrope_section": [4, 2, 2], "mrope_interleaved": True}
    vision = {"num_position_embeddings": 64, "deepstack_visual_indexes": [1]}
    return _save_qwen_vl(directory, seed, "Qwen3VL", QWEN3_PATCH, rope, vision)
