"""`videomem ask` and `videomem chat` on an ingested scripted video (offline models)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from memory_stores import late_question, scripted_store
from typer.testing import CliRunner

from videomem.cli import app

runner = CliRunner()


@pytest.fixture(scope="module")
def scripted(tmp_path_factory):
    return scripted_store(tmp_path_factory.getbasetemp())


def test_ask_json_is_one_object_with_answer_choice_and_evidence(scripted) -> None:
    store_dir, corpus = scripted
    q, event = late_question(corpus)
    result = runner.invoke(app, ["ask", "--store", str(store_dir), q.question, "--choices", ",".join(q.choices), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)  # exactly one JSON object, nothing else on stdout
    assert set(data) >= {"answer", "choice", "evidence", "trace", "tokens", "seconds"}
    assert data["choice"] == q.answer and data["answer"].startswith(f"{q.answer}. ")
    assert all({"t_start", "t_end", "text"} <= set(e) for e in data["evidence"])
    assert any(e["t_start"] < event.t_end and e["t_end"] > event.t_start for e in data["evidence"])
    assert data["trace"][-1]["tool"] == "answer" and data["seconds"] > 0


def test_ask_until_prints_answer_evidence_and_trace_without_later_memory(scripted) -> None:
    store_dir, corpus = scripted
    q, event = late_question(corpus)
    until = event.t_start - 20
    clock = f"00:{int(until) // 60:02d}:{int(until) % 60:02d}"
    result = runner.invoke(app, ["ask", "-s", str(store_dir), q.question, "--until", clock, "--video", q.video_id])
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert text.startswith("Answer: ") and "Evidence:" in text and "Trace:" in text and "Total:" in text
    assert "video.retrieval" in text or "video.rag" in text
    assert event.text.lower() not in text.lower()
    ranges = [line.split()[1] for line in text.splitlines() if line.startswith(f"  {q.video_id} ")]
    assert ranges and all(r.split("-")[1] <= clock for r in ranges)


def test_chat_answers_each_line_until_exit(scripted) -> None:
    store_dir, corpus = scripted
    result = runner.invoke(
        app, ["chat", "--store", str(store_dir)], input="What is the bus number?\n\nWhat is the safe code?\nexit\nnever asked\n"
    )
    assert result.exit_code == 0, result.output
    assert result.stdout.count("Answer: ") == 2
    assert "never asked" not in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--until", "soon"], "'soon' is not a time"),
        (["--agent", "agents/nope.yaml"], "agents/nope.yaml: no such file"),
    ],
)
def test_ask_user_errors_are_one_line(tmp_path, scripted, args, message) -> None:
    store_dir, _ = scripted
    done = subprocess.run(
        [sys.executable, "-m", "videomem.cli", "ask", "--store", str(store_dir), "what?", *args],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and message in done.stderr and "Traceback" not in done.stderr


def test_ask_without_a_store_is_one_line(tmp_path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "videomem.cli", "ask", "--store", str(tmp_path / "none"), "what?"],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 2 and "no store here" in done.stderr and done.stderr.count("\n") == 1


def test_search_prints_what_a_memory_returns_as_json_scoped_by_until(scripted) -> None:
    store_dir, corpus = scripted
    q, event = late_question(corpus)
    query = event.text.capitalize()
    result = runner.invoke(app, ["search", query, "--store", str(store_dir), "--memory", "events", "--json", "-k", "3"])
    assert result.exit_code == 0, result.output
    found = json.loads(result.stdout)
    assert len(found) == 3 and all(e["memory"] == "events" for e in found)
    assert set(found[0]) >= {"t_start", "t_end", "video_id", "text", "memory", "scale", "score", "frames"}
    assert found[0]["t_start"] < event.t_end and found[0]["t_end"] > event.t_start
    assert [e["score"] for e in found] == sorted((e["score"] for e in found), reverse=True)

    until = str(event.t_start - 20)
    hidden = json.loads(
        runner.invoke(app, ["search", query, "-s", str(store_dir), "--until", until, "--json"]).stdout
    )
    assert hidden and all(e["t_end"] <= float(until) for e in hidden)

    text = runner.invoke(app, ["search", query, "-s", str(store_dir), "--memory", "objects"]).stdout
    assert text.startswith("1. ") and f"{q.video_id} " in text


def test_search_of_an_unknown_memory_is_one_line(scripted, run_cli) -> None:
    store_dir, _ = scripted
    result = run_cli("search", "keys", "--store", store_dir, "--memory", "dreams")
    assert result.code == 2 and "unknown memory 'dreams'; available: events, objects" in result.stderr
    assert result.stderr.count("\n") == 1


def test_info_lists_each_memory_with_its_size(scripted) -> None:
    store_dir, _ = scripted
    result = runner.invoke(app, ["info", "--store", str(store_dir)])
    assert result.exit_code == 0, result.output
    lines = {line.split(":")[0]: line for line in result.stdout.splitlines()}
    clips = int(lines["clips"].split()[-1])
    assert lines["memory events"] == f"memory events: captions {clips}, generated captions {clips}"
    assert lines["memory objects"].startswith("memory objects: objects ")
    assert lines["memory visual"] == f"memory visual: segments {clips}, frames {2 * clips}, embedder offline:default:384"
