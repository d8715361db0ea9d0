"""Who said what: transcript lines that name their speaker (EgoLife's transcripts name every
one) as entities, object records and triplets.

The memories read a clip's speech from its caption text (`Shure: Mark a timestamp, right?`),
but whether a model pulls the speaker out of that line depends on the model (the offline one
does not). These facts come from the stored `transcripts.speaker` instead, the same with any
model: each speaker heard in a clip is a person record of the object memory whose value is what
they said, and each line is a `(speaker, said, words)` triplet of the episodic memory, whose
windows also list the speakers heard in them among their entities (who was there).
"""

from __future__ import annotations

from collections.abc import Sequence

from videomem.models.tasks.episodic import Triplet
from videomem.models.tasks.objects import ObjectRecord
from videomem.store import Store

SAID = "said"
"""Relation of a speech triplet."""

Lines = list[tuple[str, str]]
"""(speaker, words) in time order."""


def said_in_clip(store: Store, clip_id: int) -> Lines:
    """The lines spoken in a clip by a named speaker."""
    rows = store.query(
        "SELECT speaker, text FROM transcripts WHERE clip_id = ? AND speaker IS NOT NULL ORDER BY t_start, id",
        (clip_id,),
    )
    return [(r["speaker"], r["text"]) for r in rows]


def said_between(store: Store, video_ids: Sequence[str], t_start: float, t_end: float) -> Lines:
    """The lines by a named speaker that start in [t_start, t_end) in these videos."""
    marks = ",".join("?" * len(video_ids))
    rows = store.query(
        f"SELECT speaker, text FROM transcripts WHERE speaker IS NOT NULL AND video_id IN ({marks}) "
        "AND t_start >= ? AND t_start < ? ORDER BY t_start, id",
        (*video_ids, t_start, t_end),
    )
    return list(dict.fromkeys((r["speaker"], r["text"]) for r in rows))  # a line on two clips is said once


def speaker_records(lines: Lines) -> list[ObjectRecord]:
    """One person record per speaker, its value what they said."""
    said: dict[str, list[str]] = {}
    for speaker, text in lines:
        said.setdefault(speaker, []).append(text)
    return [ObjectRecord(name=name, kind="person", value="says: " + " ".join(texts)) for name, texts in said.items()]


def with_speakers(records: Sequence[ObjectRecord], lines: Lines) -> list[ObjectRecord]:
    """A model's records of a clip with its speakers' records in place of any it read for the
    same names (a model reading `Shure: ...` may take the name for a thing)."""
    people = speaker_records(lines)
    names = {p.name.casefold() for p in people}
    return [r for r in records if r.name.casefold() not in names] + people


def speaker_entities(entities: Sequence[str], lines: Lines) -> list[str]:
    """A window's entities and then the speakers heard in it not yet among them."""
    seen = {e.casefold() for e in entities}
    out = list(entities)
    for speaker, _ in lines:
        if speaker.casefold() not in seen:
            seen.add(speaker.casefold())
            out.append(speaker)
    return out


def speech_triplets(lines: Lines) -> list[Triplet]:
    return [Triplet(subject=speaker, relation=SAID, object=text) for speaker, text in lines]
