"""Prompt files of the model layer.

Prompts live in `models/prompts/*.md` so they can be read and changed without touching code.
Templates use `string.Template` (`$field`) rather than `str.format`, because the prompts
quote JSON, whose braces would otherwise need escaping everywhere.
"""

from __future__ import annotations

import json
import re
from functools import cache
from importlib.resources import files
from string import Template
from typing import Any


SPECIAL_TOKEN = re.compile(r"<[|\uff5c][^\s<>|\uff5c]{1,64}[|\uff5c]>")
"""Text shaped like a chat template's special token: `<|im_start|>`, `<|video_pad|>`,
`<|eot_id|>`, DeepSeek's full-width `<｜end▁of▁sentence｜>`. A server that tokenises a prompt
reads it as the token itself (a turn boundary, an image placeholder with no image)."""


def quoted_reply(text: str, limit: int = 2000) -> str:
    """A model's reply, fit to be quoted back in a prompt: special-token markers removed (see
    `SPECIAL_TOKEN`), then at most `limit` characters."""
    return SPECIAL_TOKEN.sub("", text)[:limit]


@cache
def template(name: str) -> Template:
    """The prompt file `prompts/<name>.md`; a missing file is a packaging bug, not a user error."""
    return Template((files("videomem.models") / "prompts" / f"{name}.md").read_text(encoding="utf-8"))


def render(name: str, **fields: Any) -> str:
    """Fill a prompt file; every `$field` it names must be given (a missing one is a bug)."""
    return template(name).substitute(**fields).strip()


def with_schema(prompt: str, schema: dict[str, Any] | None) -> str:
    """The prompt plus the JSON schema in words, for engines that cannot constrain decoding."""
    if schema is None:
        return prompt
    return prompt + "\n\n" + render("json_instruction", schema=json.dumps(schema, separators=(",", ":")))
