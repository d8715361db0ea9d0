"""Exceptions from libraries, squeezed into the one line a `ModelError` message allows.

Hub, tokenizer and validation errors are often many lines long (open_clip lists every known
architecture); the user needs the first line, shortened, next to the role and model it concerns.
"""

from __future__ import annotations

import jsonschema
from pydantic import ValidationError


def one_line(err: BaseException, limit: int = 300) -> str:
    """The gist of `err` on one line of at most `limit` characters."""
    if isinstance(err, ValidationError):
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        text = f"{where}: {first['msg']}"
    elif isinstance(err, jsonschema.ValidationError):
        where = ".".join(str(p) for p in err.absolute_path) or "(top level)"
        text = f"{where}: {err.message}"
    else:
        lines = str(err).strip().splitlines()
        text = lines[0] if lines else type(err).__name__
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
