"""One option alphabet: a question with up to `MAX_OPTIONS` options loads and is asked; one
with more is a one-line error when its file loads, not a failure when it is asked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from memory_stores import captioned_store, offline_models

from videomem.agent.react import Agent
from videomem.config import load_agent
from videomem.core import LETTERS, MAX_OPTIONS
from videomem.eval.lvbench import load_lvbench
from videomem.eval.questions import DatasetError

PLACES = ["RED BALLOON", "TRAIN TO PARIS", "BLUE BICYCLE", "OPEN MARKET", "NIGHT FIREWORKS", "SNOWY MOUNTAIN",
          "GREEN FERRY", "OLD LIGHTHOUSE", "QUIET LIBRARY"]


def _lvbench(path: Path, options: list[str], answer: str) -> Path:
    lines = "".join(f"\n({LETTERS[i] if i < MAX_OPTIONS else chr(ord('A') + i)}) {o}" for i, o in enumerate(options))
    qa = {"uid": 1, "question": f"Which sign is on screen first?{lines}", "answer": answer,
          "question_type": ["key information retrieval"], "time_reference": ""}
    path.write_text(json.dumps({"key": "v", "qa": [qa]}) + "\n")
    return path


@pytest.mark.parametrize("n", [6, MAX_OPTIONS])
def test_a_question_with_up_to_max_options_loads_and_is_asked(tmp_path: Path, n: int) -> None:
    options = PLACES[:n]
    (question,) = load_lvbench(_lvbench(tmp_path / "q.jsonl", options, LETTERS[n - 1]))
    assert question.choices == tuple(options) and question.answer == LETTERS[n - 1]

    store = captioned_store(tmp_path / "store", [options[n - 1]])
    answer = Agent(store, offline_models(), load_agent("caption-rag")).ask(
        question.question, list(question.choices), None, question.video_id
    )
    assert answer.choice == LETTERS[n - 1], answer.trace


def test_more_options_than_the_alphabet_is_one_line_at_load(tmp_path: Path) -> None:
    path = _lvbench(tmp_path / "q.jsonl", PLACES[: MAX_OPTIONS + 1], "A")
    with pytest.raises(DatasetError) as err:
        load_lvbench(path)
    message = str(err.value)
    assert "\n" not in message and f"{MAX_OPTIONS + 1} options" in message and f"2 to {MAX_OPTIONS}" in message
