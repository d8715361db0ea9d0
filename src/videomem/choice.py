"""Multiple-choice options: their letters, the query that carries them, and which one a reply chose.

There is one reader of replies for the whole package — prompted tasks, the agent and the
scorer all call `read_choice` — so a reply is never read one way when it is answered and
another way when it is scored. It never guesses: a reply that names no option, or names two,
chose nothing, and is scored wrong.

A reply chose an option when, in this order:

1. a letter or an option's text stands inside `<answer>…</answer>`;
2. the whole reply is an option's text (case, spacing, quotes and end punctuation aside);
3. it names a letter explicitly: the reply is only a letter ("B", "(b)", "C."), or a letter
   follows "answer", "option" or "choice" ("Answer: b", "the answer is (C)");
4. exactly one of the options' capital letters stands alone in it ("B. the train", "I pick C");
   "A" followed by a lower-case word is the article ("A red door is opened."), not option A,
   unless that word is "and", "or" or "nor" ("Both A and C" names two options: none);
5. it holds the text of exactly one option, not counting an option that is part of a longer one
   it also holds ("It was the red door, I think.").

Lower-case letters count only in the explicit forms of 1 and 3: in running text "a" is an
article and "i" a pronoun far more often than an option.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from videomem.core import LETTERS

_TAGGED = re.compile(r"<answer>(.*?)</answer>", re.IGNORECASE | re.DOTALL)
_LABEL = re.compile(r"^\s*\(?([A-Ha-h])[).:]\s+")
_ONLY_LETTER = re.compile(r"^\W*([A-Ha-h])\W*$")
_CUED = re.compile(r"\b(?:answer|option|choice)\b(?:\s+is)?\s*[:=\-]?\s*\(?([A-Ha-h])\)?(?![A-Za-z0-9'’\-])", re.IGNORECASE)
_STANDALONE = re.compile(r"(?<![A-Za-z0-9'’\-])([A-H])(?![A-Za-z0-9'’\-])")
_ARTICLE = re.compile(r"[ \t]+(?!(?:and|or|nor)\b)[a-z]")
_EDGES = " \t\n\"'“”‘’`.,;:!?()[]"
MIN_ECHO = 3
"""Characters an option's text needs before it is looked for inside a longer reply."""


def strip_label(option: str) -> str:
    """'(A) red box' / 'A. red box' → 'red box' (datasets write options both ways)."""
    return _LABEL.sub("", option, count=1).strip() or option.strip()


def search_text(question: str, choices: Sequence[str] | None) -> str:
    """The question followed by its options: what the agent's first step searches for, and what
    the caption-RAG baseline retrieves with, so both start from the same query."""
    return " ".join([question, *(choices or [])])


def read_choice(text: str | None, choices: Sequence[str]) -> str | None:
    """The letter of the option a reply chose, or None (see the module docstring for the rules)."""
    if not text or not choices:
        return None
    letters = LETTERS[: len(choices)]
    tagged = _TAGGED.search(text)
    if tagged:
        inside = tagged.group(1)
        found = _whole_option(inside, choices) or _explicit(inside, letters) or _standalone(inside, letters)
        if found:
            return found
    return (
        _whole_option(text, choices)
        or _explicit(text, letters)
        or _standalone(text, letters)
        or _echoed_option(text, choices)
    )


def _normal(text: str) -> str:
    return " ".join(text.casefold().split()).strip(_EDGES)


def _whole_option(text: str, choices: Sequence[str]) -> str | None:
    said = _normal(text)
    matches = [LETTERS[i] for i, c in enumerate(choices) if said and _normal(strip_label(c)) == said]
    return matches[0] if len(matches) == 1 else None


def _is_article(text: str, match: re.Match[str]) -> bool:
    return match.group(1) in "Aa" and _ARTICLE.match(text, match.end()) is not None


def _explicit(text: str, letters: str) -> str | None:
    only = _ONLY_LETTER.match(text)
    if only and only.group(1).upper() in letters:
        return only.group(1).upper()
    cued = {m.group(1).upper() for m in _CUED.finditer(text) if not _is_article(text, m)}
    cued &= set(letters)
    return cued.pop() if len(cued) == 1 else None


def _standalone(text: str, letters: str) -> str | None:
    found = {m.group(1) for m in _STANDALONE.finditer(text) if m.group(1) in letters and not _is_article(text, m)}
    return found.pop() if len(found) == 1 else None


def _echoed_option(text: str, choices: Sequence[str]) -> str | None:
    said = _normal(text)
    held = {}
    for i, choice in enumerate(choices):
        option = _normal(strip_label(choice))
        if len(option) >= MIN_ECHO and re.search(rf"(?<!\w){re.escape(option)}(?!\w)", said):
            held[LETTERS[i]] = option
    longest = [k for k, v in held.items() if not any(v != w and v in w for w in held.values())]
    return longest[0] if len(longest) == 1 else None


def resolve_choice(letter: str | None, text: str | None, choices: Sequence[str]) -> str | None:
    """The option a reply chose: its structured `letter` when that names one of `choices`, else
    what its text says (`read_choice`)."""
    if letter and letter in LETTERS[: len(choices)]:
        return letter
    return read_choice(text, choices)
