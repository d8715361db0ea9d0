"""`videomem synth --speech` end to end: the spoken track, and its need_audio questions answered
from memory — correctly when a speech model gives the words, honestly "not transcribed" when
the offline profile only heard that someone spoke.

One corpus (conftest's `speech_synth`, 2 days) and two small stores of the clips that hold
its spoken lines (one 30-s clip per file): one ingested with a scripted speech model, one with
the offline profile (VAD only). The scripted model is the fake backend of issue 15: it returns,
for each speech span the stage hands it, the line the synth recorded as spoken there
(`speech.json`, the ground truth) — never anything read from a question. Alignment, chunk
boundaries, resume and the no-audio case of the transcribe stage are tested on an espeak-ng
track in test_transcribe.py.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from memory_stores import offline_models

from videomem.agent.react import Agent
from videomem.config import load_agent, load_pipeline
from videomem.eval.questions import Question
from videomem.synth import SpokenLine
from videomem.synth import SynthCorpus
from videomem.models.asr import Span, speech_spans
from videomem.pipeline.runner import ingest
from videomem.store import Store
from videomem.timeline import DAY, egolife_start, parse_time
from videomem.video.audio import audio_chunks
from videomem.video.transcripts import Segment

STAGES = ["sample", "transcribe", "caption", "objects"]
"""What the TeleMem agent reads: event and object memory, and the transcripts."""


class ScriptedRecognizer:
    """A speech model that knows one file's script: for each speech span, the lines `speech.json`
    says were spoken there. Each file is shorter than one transcribe chunk, so chunk seconds are
    file seconds."""

    def __init__(self, lines: Sequence[SpokenLine], file_start: float) -> None:
        self.lines = [(line.t_start - file_start, line.t_end - file_start, line.text) for line in lines]

    def transcribe(self, audio: np.ndarray, spans: Sequence[Span]) -> list[Segment]:
        return [Segment(max(a, s), min(b, e), text) for a, b in spans for s, e, text in self.lines if s < b and a < e]


def need_audio(corpus: SynthCorpus) -> list[tuple[Question, SpokenLine]]:
    """Each need_audio question with the line that answers it (the line at its target time)."""
    records = json.loads(corpus.questions_file.read_text())
    heard = {r["ID"] for r in records if r["need_audio"]}
    out = []
    for q in corpus.questions:
        if q.id in heard:
            ((t, _),) = q.targets
            out.append((q, next(line for line in corpus.speech if line.t_start <= t <= line.t_end)))
    return out


def speech_files(corpus: SynthCorpus) -> list[Path]:
    """The first day's files that hold a spoken line (one line each; its questions are asked then)."""
    ids = {line.video_id for line in corpus.speech if line.t_start < DAY}
    return [path for path in corpus.videos if path.stem in ids]


def first_day(corpus: SynthCorpus) -> list[tuple[Question, SpokenLine]]:
    return [(q, line) for q, line in need_audio(corpus) if q.until < DAY]


@pytest.fixture(scope="module")
def heard_store(speech_synth: SynthCorpus, tmp_path_factory: pytest.TempPathFactory) -> Store:
    """The spoken clips with the offline profile: speech found by VAD, not transcribed."""
    store = Store(tmp_path_factory.mktemp("heard") / "store", create=True)
    report = ingest(
        speech_files(speech_synth), store, load_pipeline(speech_synth.pipeline), offline_models,
        stages=STAGES, timeline="egolife", show_progress=False,
    )  # fmt: skip
    assert report.ok, report.all_failures()
    return store


@pytest.fixture(scope="module")
def transcribed_store(speech_synth: SynthCorpus, heard_store: Store, tmp_path_factory: pytest.TempPathFactory) -> Store:
    """The same clips with the scripted speech model, one file at a time (each has its own script).
    After `heard_store`, so the copied model sets share the offline models it loaded."""
    store = Store(tmp_path_factory.mktemp("transcribed") / "store", create=True)
    for path in speech_files(speech_synth):
        models = copy.copy(offline_models())  # the offline models already loaded, plus a speech model
        lines = [line for line in speech_synth.speech if line.video_id == path.stem]
        models.__dict__["asr"] = ScriptedRecognizer(lines, egolife_start(path))
        report = ingest(
            [path], store, load_pipeline(speech_synth.pipeline), lambda m=models: m,
            stages=STAGES, timeline="egolife", show_progress=False,
        )  # fmt: skip
        assert report.ok, report.all_failures()
    return store


def test_the_track_says_each_line_where_the_script_puts_it(speech_synth: SynthCorpus) -> None:
    assert len(speech_synth.speech) == 6 and {line.kind for line in speech_synth.speech} == {"item", "name", "number"}
    spoken = {line.video_id for line in speech_synth.speech}
    quiet = [path for path in speech_synth.videos if path.stem not in spoken]
    for path in [path for path in speech_synth.videos if path.stem in spoken] + quiet[:: len(quiet) // 3]:
        start = egolife_start(path)
        said = [(line.t_start - start, line.t_end - start) for line in speech_synth.speech if line.video_id == path.stem]
        found = speech_spans(next(audio_chunks(path, 60)).samples)
        assert len(found) == len(said), path.name  # silence everywhere else
        for (a, b), (s, e) in zip(found, said):
            assert abs(a - s) < 0.5 and abs(b - e) < 0.5, (path.name, (a, b), (s, e))


def test_speech_questions_are_answered_from_the_transcript(
    speech_synth: SynthCorpus, transcribed_store: Store
) -> None:
    said = [line for line in speech_synth.speech if line.t_start < DAY]
    rows = transcribed_store.query("SELECT t_start, text, source FROM transcripts ORDER BY t_start")
    assert [(r["text"], r["source"]) for r in rows] == [(line.text, "asr") for line in said]
    assert all(abs(r["t_start"] - line.t_start) < 0.5 for r, line in zip(rows, said))
    agent = Agent(transcribed_store, offline_models(), load_agent())
    asked = [(q, line) for q, line in first_day(speech_synth) if line.kind in ("item", "number")]
    assert len(asked) == 2
    for q, line in asked:
        answer = agent.ask(q.question, list(q.choices), until=q.until)
        assert answer.choice == q.answer, (q.question, q.answer_text, answer.text)
        # The evidence that names the answer is the caption of the clip the line was spoken in,
        # which quotes the speech model's words: nothing on screen says them.
        quoting = [e for e in answer.evidence if line.text in e.text]
        assert quoting and all(e.t_start <= line.t_start <= e.t_end for e in quoting), q.question


def test_offline_profile_says_speech_was_not_transcribed_instead_of_guessing(
    speech_synth: SynthCorpus, heard_store: Store
) -> None:
    rows = heard_store.query("SELECT DISTINCT source FROM transcripts")
    assert [r["source"] for r in rows] == ["vad"]
    agent = Agent(heard_store, offline_models(), load_agent())
    # The number question: its options are digits, which must not be found inside the evidence's
    # clock times ("first seen DAY1 08:35:30" does not name 0835).
    ((q, line),) = [(q, line) for q, line in first_day(speech_synth) if line.kind == "number"]
    answer = agent.ask(q.question, list(q.choices), until=q.until)
    assert answer.choice is None, (q.question, answer.text)
    assert "not transcribed" in answer.text and not any(c in answer.text for c in q.choices)
    clock = r"(?:DAY\d )?\d\d:\d\d:\d\d"
    named = [(parse_time(a), parse_time(b)) for a, b in re.findall(f"({clock})-({clock})", answer.text)]
    assert named and any(a <= line.t_start <= b for a, b in named), answer.text
    # Every time it names is a clip where someone spoke before the query time.
    for a, b in named:
        assert any(a <= s.t_start <= b and s.t_end <= q.until for s in speech_synth.speech), (answer.text, a, b)
    # A question about what was shown in one of these clips, not said, is still answered from the screen.
    spans = [(egolife_start(path), egolife_start(path) + 30) for path in speech_files(speech_synth)]
    asked = {q.id for q, _ in need_audio(speech_synth)}
    shown = next(
        q for q in speech_synth.questions
        if q.id not in asked and all(any(a <= t <= b for a, b in spans) for t, _ in q.targets)
    )  # fmt: skip
    assert agent.ask(shown.question, list(shown.choices), until=shown.until).choice == shown.answer
