"""Randomly initialised Qwen2.5-VL checkpoints of real shapes, saved like hub checkpoints.

Throughput depends on a model's shapes, not on its weights, so `benchmarks/gpu_ingest.py` and
the backend tests load these through the very code path a hub model takes (AutoProcessor +
AutoModelForImageTextToText from a directory) without downloading anything. What such a model
writes is noise: use it for speed and plumbing, never for quality.

The shapes of "3b" and "7b" are those of Qwen/Qwen2.5-VL-3B-Instruct and -7B-Instruct (their
published config.json); "tiny" keeps the architecture at a few thousand parameters for the CPU.
The tokenizer is a byte-level BPE trained here on the project's prompt files (with Qwen's special
tokens), so prompts tokenise to roughly the length a real Qwen tokenizer gives them.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path
from typing import Any, Literal

Shape = Literal["tiny", "3b", "7b"]

VISION_TOKENS = ["<|vision_start|>", "<|vision_end|>", "<|image_pad|>", "<|video_pad|>"]
"""The markers only the processor writes, around and for each image or video."""
SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", *VISION_TOKENS]

CHAT_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for part in message['content'] %}"
    "{% if part['type'] == 'image' %}<|vision_start|><|image_pad|><|vision_end|>"
    "{% elif part['type'] == 'text' %}{{ part['text'] }}{% endif %}"
    "{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
"""Qwen's chat format: an image becomes <|vision_start|><|image_pad|><|vision_end|>, which the
processor expands to one pad token per merged 28 × 28 patch."""

_VISION = {
    "depth": 32, "hidden_size": 1280, "intermediate_size": 3420, "num_heads": 16, "patch_size": 14,
    "spatial_merge_size": 2, "temporal_patch_size": 2, "window_size": 112, "fullatt_block_indexes": [7, 15, 23, 31],
    "hidden_act": "silu", "in_channels": 3,
}
SHAPES: dict[str, dict[str, Any]] = {
    "3b": {
        "text": {"hidden_size": 2048, "intermediate_size": 11008, "num_hidden_layers": 36, "num_attention_heads": 16,
                 "num_key_value_heads": 2, "vocab_size": 151936, "tie_word_embeddings": True,
                 "mrope_section": [16, 24, 24]},
        "vision": _VISION | {"out_hidden_size": 2048},
        "vocab": 8000,
    },
    "7b": {
        "text": {"hidden_size": 3584, "intermediate_size": 18944, "num_hidden_layers": 28, "num_attention_heads": 28,
                 "num_key_value_heads": 4, "vocab_size": 152064, "tie_word_embeddings": False,
                 "mrope_section": [16, 24, 24]},
        "vision": _VISION | {"out_hidden_size": 3584},
        "vocab": 8000,
    },
    "tiny": {
        "text": {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2,
                 "num_key_value_heads": 1, "vocab_size": 0, "tie_word_embeddings": True, "mrope_section": [4, 2, 2]},
        "vision": {"depth": 2, "hidden_size": 32, "intermediate_size": 64, "num_heads": 2, "patch_size": 14,
                   "spatial_merge_size": 2, "temporal_patch_size": 2, "window_size": 56, "fullatt_block_indexes": [1],
                   "hidden_act": "silu", "in_channels": 3, "out_hidden_size": 32},
        "vocab": 600,
    },
}
"""vocab_size 0: as many embeddings as the tokenizer has tokens."""


def prompt_corpus() -> list[str]:
    """The project's prompt files: what the tokenizer is trained on."""
    folder = files("videomem.models") / "prompts"
    return [entry.read_text(encoding="utf-8") for entry in folder.iterdir() if entry.name.endswith(".md")]


def train_tokenizer(vocab: int, corpus: list[str] | None = None) -> Any:
    """A byte-level BPE with Qwen's special tokens, trained on `corpus` (default: the prompt files)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    bpe.train_from_iterator(corpus if corpus is not None else prompt_corpus(), trainer=trainer)
    return PreTrainedTokenizerFast(
        tokenizer_object=bpe, eos_token="<|im_end|>", pad_token="<|endoftext|>", padding_side="left"
    )


def save_checkpoint(model: Any, processor: Any, directory: Path) -> Path:
    """Save a random Qwen VL and its processor to `directory` like a hub checkpoint, generation
    ending at <|im_end|>, padding with <|endoftext|> and never writing a vision marker. Returns
    `directory`."""
    tokenizer = processor.tokenizer
    model.generation_config.eos_token_id = tokenizer.convert_tokens_to_ids("<|im_end|>")
    model.generation_config.pad_token_id = tokenizer.convert_tokens_to_ids("<|endoftext|>")
    # Random weights write any token; a trained Qwen never writes its vision markers. Servers that
    # return them as text (`transformers serve` does for Qwen) would hand back a reply that, quoted
    # in the next prompt, counts as an image or video the request does not carry.
    model.generation_config.suppress_tokens = tokenizer.convert_tokens_to_ids(VISION_TOKENS)
    directory.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(directory)
    processor.save_pretrained(directory)
    return directory


def save_random_qwen2_5_vl(directory: Path, shape: Shape = "tiny", seed: int = 0, device: str = "cpu") -> Path:
    """Build a Qwen2.5-VL of `shape` with random weights (fixed seed; bfloat16 unless tiny) and
    save it with its processor to `directory`, loadable like a hub checkpoint. Returns `directory`."""
    import torch
    from transformers import (
        Qwen2_5_VLConfig,
        Qwen2_5_VLForConditionalGeneration,
        Qwen2_5_VLProcessor,
        Qwen2VLImageProcessor,
        Qwen2VLVideoProcessor,
    )

    spec = SHAPES[shape]
    tokenizer = train_tokenizer(spec["vocab"])
    ids = {token: tokenizer.convert_tokens_to_ids(token) for token in SPECIAL_TOKENS}
    if shape == "tiny":  # small images, so a CPU run stays fast: about 56 × 56 pixels
        image_processor = Qwen2VLImageProcessor(min_pixels=56 * 56, max_pixels=56 * 56)
    else:
        image_processor = Qwen2VLImageProcessor()
    processor = Qwen2_5_VLProcessor(
        image_processor=image_processor,
        tokenizer=tokenizer,
        video_processor=Qwen2VLVideoProcessor(),
        chat_template=CHAT_TEMPLATE,
    )
    text = dict(spec["text"])
    section = text.pop("mrope_section")
    text["vocab_size"] = text["vocab_size"] or len(tokenizer)
    config = Qwen2_5_VLConfig(
        text_config=text | {
            "max_position_embeddings": 32768,
            "rope_parameters": {"rope_type": "default", "rope_theta": 1000000.0, "mrope_section": section},
            "rms_norm_eps": 1e-6,
            "bos_token_id": ids["<|endoftext|>"],
            "eos_token_id": ids["<|im_end|>"],
            "pad_token_id": ids["<|endoftext|>"],
        },
        vision_config=spec["vision"],
        image_token_id=ids["<|image_pad|>"],
        video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"],
        vision_end_token_id=ids["<|vision_end|>"],
        tie_word_embeddings=text["tie_word_embeddings"],
    )
    dtype = torch.float32 if shape == "tiny" else torch.bfloat16
    torch.manual_seed(seed)
    with torch.device(device):
        model = Qwen2_5_VLForConditionalGeneration._from_config(config, dtype=dtype).eval()
    return save_checkpoint(model, processor, directory)
