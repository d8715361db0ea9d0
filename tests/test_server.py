"""The HTTP API (`videomem serve`) over the session's scripted store: info, search and ask,
what files it serves (and every way of escaping the store it refuses), the token, ingest
jobs, and 20 concurrent questions answered while an ingest runs."""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Sequence
from urllib.parse import urlsplit

import httpx
import pytest
from fastapi.testclient import TestClient
from live_server import ClockMemory, copy_store, live, register_memory, sse
from memory_stores import late_question, offline_models, scripted_store

from videomem.agent.react import Agent
from videomem.config import default_path, load_agent
from videomem.errors import StoreError
from videomem.evidence import Evidence
from videomem.memory.events import EventMemory
from videomem.memory.registry import MEMORIES, Registered
from videomem.models.tasks.agent import AnswerOut, ToolCall
from videomem.server.app import create_app
from videomem.store import Store


LOCAL = "http://localhost"
"""The test client's base URL: a name the server trusts (guards.py)."""


@pytest.fixture(scope="module")
def scripted(tmp_path_factory):
    return scripted_store(tmp_path_factory.getbasetemp())


@pytest.fixture(scope="module")
def client(scripted):
    store_dir, _ = scripted
    with TestClient(create_app(store_dir, offline_models(), load_agent()), base_url=LOCAL) as test_client:
        yield test_client


def test_info_lists_each_registered_memory_and_the_agents_tools(client, scripted, monkeypatch) -> None:
    store_dir, _ = scripted
    register_memory(monkeypatch, "clock", Registered(ClockMemory))  # registered after the server started
    info = client.get("/info").json()
    with Store(store_dir) as store:
        clips = store.query("SELECT COUNT(*) AS n FROM clips")[0]["n"]
        events = EventMemory(store, offline_models()).stats()
    assert [m["name"] for m in info["memories"]] == list(MEMORIES) and list(MEMORIES)[-1] == "clock"
    memories = {m["name"]: m for m in info["memories"]}
    assert memories["events"]["stats"] == events and memories["clock"]["stats"] == {"clips": clips}
    assert memories["clock"]["description"].startswith("Clock memory: which clips")
    tools = {t["name"]: t for t in info["agent"]["tools"]}
    assert list(tools) == list(load_agent().tools) and "video.qa" in tools
    assert tools["video.qa"]["parameters"]["required"] == ["question", "t_start", "t_end"]
    assert info["clips"] == clips and info["timeline"] == "single" and info["models"] == "offline"
    assert [(v["id"], v["url"]) for v in info["videos"]] == [("synth0000", "/videos/synth0000")]

    found = client.get(memories["clock"]["search"], params={"query": "noon", "top_k": 2, "until": "00:00:25"}).json()
    assert [(e["t_start"], e["memory"], e["span"]) for e in found] == [(0.0, "clock", "00:00:00-00:00:10"), (10.0, "clock", "00:00:10-00:00:20")]
    assert found[0]["frame_urls"] == ["/frames/synth0000/000000_0.jpg", "/frames/synth0000/000000_1.jpg"]


def test_search_returns_what_the_memory_retrieves_with_frames_to_show(client, scripted) -> None:
    store_dir, corpus = scripted
    _, event = late_question(corpus)
    query = event.text.capitalize()
    found = client.get("/memories/events/search", params={"query": query, "top_k": 3}).json()
    with Store(store_dir) as store:
        direct = EventMemory(store, offline_models()).retrieve(query, 3)
    assert [(e["t_start"], e["text"]) for e in found] == [(e.t_start, e.text) for e in direct]
    assert found[0]["t_start"] < event.t_end and found[0]["t_end"] > event.t_start
    frame = client.get(found[0]["frame_urls"][0])
    assert frame.status_code == 200 and frame.headers["content-type"] == "image/jpeg"
    assert frame.content == (store_dir / found[0]["frame_urls"][0].lstrip("/")).read_bytes()

    until = event.t_start - 20
    hidden = client.get("/memories/objects/search", params={"query": query, "until": str(until)}).json()
    assert hidden and all(e["t_end"] <= until for e in hidden)

    unknown = client.get("/memories/dreams/search", params={"query": "x"})
    assert unknown.status_code == 404 and unknown.json()["detail"] == f"unknown memory 'dreams'; available: {', '.join(MEMORIES)}"
    for params, message in [({"video_id": "nope"}, "video 'nope' is not in the store"), ({"until": "soon"}, "'soon' is not a time")]:
        bad = client.get("/memories/events/search", params={"query": "x", **params})
        assert bad.status_code == 400 and message in bad.json()["detail"]


def test_ask_streams_each_step_then_the_answer_with_its_evidence(client, scripted) -> None:
    _, corpus = scripted
    q, event = late_question(corpus)
    body = {"question": q.question, "choices": list(q.choices), "video_id": q.video_id}
    with client.stream("POST", "/ask", json=body) as reply:
        assert reply.status_code == 200 and reply.headers["content-type"].startswith("text/event-stream")
        events = sse(reply.iter_lines())
    kinds = [kind for kind, _ in events]
    assert kinds == ["step"] * (len(kinds) - 1) + ["answer"]
    answer = events[-1][1]
    assert [data for _, data in events[:-1]] == answer["trace"] and answer["trace"][-1]["tool"] == "answer"
    assert answer["choice"] == q.answer and answer["answer"].startswith(f"{q.answer}. ")
    assert any(e["t_start"] < event.t_end and e["t_end"] > event.t_start for e in answer["evidence"])
    for e in answer["evidence"]:
        assert {"t_start", "t_end", "source", "score", "video_id", "span", "frame_urls"} <= set(e) and e["frame_urls"]
    assert client.get(answer["evidence"][0]["frame_urls"][-1]).status_code == 200
    retrieval = next(step for step in answer["trace"] if step["tool"] == "video.retrieval")
    assert retrieval["evidence"] and all(e["frame_urls"] for e in retrieval["evidence"])


@pytest.mark.parametrize(
    ("body", "where"),
    [
        ({"question": "  "}, "question"),
        ({"question": "Which?", "choices": ["only one"]}, "choices"),
        ({"question": "Which?", "until": "soon"}, "until"),
        ({"question": "Which?", "model": "gpt"}, "model"),
    ],
)
def test_a_malformed_question_is_refused_before_the_agent_runs(client, body, where) -> None:
    reply = client.post("/ask", json=body)
    assert reply.status_code == 422 and reply.json()["detail"][0]["loc"][-1] == where


def test_a_question_the_agent_refuses_ends_the_stream_with_one_error(client) -> None:
    with client.stream("POST", "/ask", json={"question": "Which?", "video_id": "nope"}) as reply:
        events = sse(reply.iter_lines())
    assert len(events) == 1 and events[0][0] == "error"
    assert events[0][1]["detail"].startswith("video 'nope' is not in the store")


def test_the_video_is_served_with_range_requests(client, scripted) -> None:
    store_dir, corpus = scripted
    data = corpus.videos[0].read_bytes()
    whole = client.get("/videos/synth0000")
    assert whole.status_code == 200 and whole.content == data and whole.headers["accept-ranges"] == "bytes"
    assert whole.headers["content-type"] == "video/mp4"
    part = client.get("/videos/synth0000", headers={"Range": "bytes=100-199"})
    assert part.status_code == 206 and part.content == data[100:200]
    assert part.headers["content-range"] == f"bytes 100-199/{len(data)}"
    tail = client.get("/videos/synth0000", headers={"Range": "bytes=-50"})
    assert tail.status_code == 206 and tail.content == data[-50:]
    assert client.get("/videos/synth0000", headers={"Range": f"bytes={len(data)}-"}).status_code == 416
    assert client.get("/videos/nope").status_code == 404


def _raw_get(base: str, path: str) -> tuple[int, bytes]:
    """GET exactly `path`, unnormalised (client libraries resolve `..` before sending)."""
    url = urlsplit(base)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    try:
        conn.putrequest("GET", path, skip_accept_encoding=True)
        conn.endheaders()
        reply = conn.getresponse()
        return reply.status, reply.read()
    finally:
        conn.close()


def test_paths_that_escape_the_store_get_404(tmp_path, scripted) -> None:
    store_dir = copy_store(scripted[0], tmp_path / "store")
    secret = tmp_path / "secret.jpg"
    secret.write_bytes(b"SECRET outside the store")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "also.jpg").write_bytes(b"SECRET in a folder outside the store")
    (store_dir / "frames" / "synth0000" / "leak.jpg").symlink_to(secret)
    (store_dir / "frames" / "elsewhere").symlink_to(outside, target_is_directory=True)
    escapes = [
        "/frames/../memory.sqlite",
        "/frames/synth0000/../../memory.sqlite",
        "/frames/%2e%2e/memory.sqlite",
        "/frames/..%2fmemory.sqlite",
        "/frames/%2E%2E%2Fmemory.sqlite",
        "/frames/%252e%252e/memory.sqlite",
        "/frames//etc/passwd",
        "/frames/%2Fetc%2Fpasswd",
        f"/frames/{secret}",
        "/frames/synth0000/leak.jpg",
        "/frames/elsewhere/also.jpg",
        "/frames/synth0000/000000_0.jpg%00",
        "/frames/synth0000",
        "/videos/..%2Fmemory.sqlite",
        "/videos/%2e%2e",
        "/static/../memory.sqlite",
        "/static/%2e%2e/app.py",
    ]
    with live(create_app(store_dir, offline_models(), load_agent())) as base:
        status, body = _raw_get(base, "/frames/synth0000/000000_0.jpg")
        assert status == 200 and body == (store_dir / "frames/synth0000/000000_0.jpg").read_bytes()
        for path in escapes:
            status, body = _raw_get(base, path)
            assert (path, status) == (path, 404) and b"SECRET" not in body and b"SQLite" not in body


def test_with_a_token_every_route_requires_it(scripted) -> None:
    store_dir, _ = scripted
    def app():
        return create_app(store_dir, offline_models(), load_agent(), token="s3cret")

    routes = ["/", "/info", "/docs", "/openapi.json", "/static/app.js", "/frames/synth0000/000000_0.jpg",
              "/videos/synth0000", "/ingest", "/memories/events/search?query=bus"]
    with TestClient(app(), base_url=LOCAL) as anonymous:
        for route in routes:
            assert anonymous.get(route).status_code == 401, route
            assert anonymous.get(route, headers={"Authorization": "Bearer wrong"}).status_code == 401, route
            assert anonymous.get(route, headers={"Authorization": "Bearer s3cret"}).status_code == 200, route
        assert anonymous.post("/ask", json={"question": "Which bus?"}).status_code == 401
        assert anonymous.post("/ingest", json={"paths": ["x.mp4"]}).status_code == 401
        assert anonymous.get("/?token=wrong").status_code == 401
    with TestClient(app(), base_url=LOCAL) as browser:
        login = browser.get("/?token=s3cret", follow_redirects=False)  # how the page is opened
        assert login.status_code == 303 and login.headers["location"] == "/" and "HttpOnly" in login.headers["set-cookie"]
        assert "s3cret" not in login.headers["set-cookie"]
        assert browser.get("/info").status_code == 200 and browser.get("/videos/synth0000").status_code == 200


def test_api_docs_describe_every_route(client) -> None:
    docs = client.get("/docs")
    assert docs.status_code == 200 and "swagger" in docs.text.lower()
    paths = client.get("/openapi.json").json()["paths"]
    assert set(paths) >= {"/info", "/ask", "/memories/{name}/search", "/videos/{video_id}", "/frames/{relative}",
                          "/ingest", "/ingest/{job_id}"}
    assert "text/event-stream" in json.dumps(paths["/ask"])


def test_an_ingest_job_reports_progress_results_and_failures(tmp_path, bikes) -> None:
    Store(tmp_path / "store", create=True).close()
    app = create_app(tmp_path / "store", offline_models(), load_agent(), ingest_roots=[tmp_path, bikes.parent])
    with TestClient(app, base_url=LOCAL) as client:
        assert client.get("/info").json()["videos"] == []
        started = client.post("/ingest", json={"paths": [str(bikes), str(tmp_path / "missing.mp4")], "stages": ["sample"]})
        assert started.status_code == 202 and started.json()["id"] == 1
        assert app.state.jobs.get(1).ended.wait(120)
        job = client.get("/ingest/1").json()
        assert job["state"] == "done" and job["error"] is None
        assert job["results"] == [{"stage": "sample", "done": 1, "skipped": 0, "failed": 0}]
        assert job["progress"] == {"stage": "sample", "done": 1, "total": 1, "unit": "clip"}
        assert job["failures"] == [[str(tmp_path / "missing.mp4"), "no such file or directory"]]
        assert [v["id"] for v in client.get("/info").json()["videos"]] == ["bikes"]  # readers see the new video
        assert [j["id"] for j in client.get("/ingest").json()] == [1]

        assert client.post("/ingest", json={"paths": ["x.mp4"], "stages": ["dream"]}).status_code == 422
        bad = client.post("/ingest", json={"paths": [str(tmp_path / "x.mp4")], "pipeline": str(tmp_path / "none.yaml")})
        assert bad.status_code == 400 and bad.json()["detail"] == f"{tmp_path / 'none.yaml'}: no such file"
        assert client.get("/ingest/7").status_code == 404


def test_serving_a_folder_without_a_store_is_one_line(tmp_path) -> None:
    with pytest.raises(StoreError, match="no store here"):
        create_app(tmp_path / "none", offline_models(), load_agent())


# ------------------------------------------------------------------ concurrency


class KeywordReader:
    """A language model for the concurrency test: retrieval on the question, then finish; the
    answer is the option that the evidence mentions most. Fast and deterministic, so 20
    questions cost little and each has one right reply; everything else is the offline model's."""

    def __init__(self, real: object) -> None:
        self.real = real

    def __getattr__(self, name: str):
        return getattr(self.real, name)

    def plan_step(self, state) -> ToolCall:
        if state.step == 1:
            return ToolCall(thought="search", tool="video.retrieval", arguments={"query": state.question})
        return ToolCall(thought="done", tool="finish")

    def answer(self, question: str, choices: list[str] | None, evidence: Sequence[Evidence], now: float | None = None) -> AnswerOut:
        text = " ".join(e.text.lower() for e in evidence)
        if not choices:
            return AnswerOut(answer=evidence[0].text if evidence else "unknown")
        counts = [text.count(c.lower()) for c in choices]
        best = max(range(len(choices)), key=lambda i: (counts[i], -i))
        return AnswerOut(answer=choices[best], choice="ABCDE"[best])


class GatedVision:
    """The offline vision model, except that captioning waits for the test to let it go, so an
    ingest is certainly running (its sample stage committed, captions pending) meanwhile."""

    def __init__(self, real: object) -> None:
        self.real = real
        self.captioning = threading.Event()
        self.go = threading.Event()

    def __getattr__(self, name: str):
        return getattr(self.real, name)

    def _held(self, task: str, clips):
        self.captioning.set()
        assert self.go.wait(300), "the test never let captioning go on"
        return getattr(self.real, task)(clips)

    def caption_clips(self, clips):
        return self._held("caption_clips", clips)

    def describe_clips(self, clips):  # caption and object records in one pass (pipeline/vision_pass.py)
        return self._held("describe_clips", clips)


class HeldModels:
    """The offline models with the two doubles above."""

    def __init__(self) -> None:
        self.real = offline_models()
        self.language = KeywordReader(self.real.language)
        self.vision = GatedVision(self.real.vision)

    def __getattr__(self, name: str) -> object:
        return getattr(self.real, name)


def _answered(reply: dict) -> tuple:
    return reply["answer"], reply["choice"], tuple((e["video_id"], e["t_start"], e["t_end"], e["text"]) for e in reply["evidence"])


@pytest.mark.slow
def test_twenty_concurrent_questions_complete_correctly_while_an_ingest_runs(tmp_path, scripted, bikes) -> None:
    store_dir = copy_store(scripted[0], tmp_path / "store")
    questions = scripted[1].questions[:20]
    assert len(questions) == 20
    models = HeldModels()
    with Store(store_dir) as store:
        agent = Agent(store, models, load_agent())
        expected = [_answered(agent.ask(q.question, list(q.choices), q.until, q.video_id).to_json()) for q in questions]
    assert len(set(expected)) > 10  # the questions differ, so a mixed-up reply would show

    app = create_app(store_dir, models, load_agent(), threads=8, ingest_roots=[bikes.parent])
    with live(app) as base, httpx.Client(base_url=base, timeout=300) as http:
        assert http.post("/ingest", json={"paths": [str(bikes)]}).status_code == 202
        assert models.vision.captioning.wait(120)  # sampled and committed; now captioning, held
        assert http.post("/ingest", json={"paths": [str(bikes)]}).status_code == 409

        replies: list[list | None] = [None] * len(questions)

        def ask(n: int) -> None:
            q = questions[n]
            body = {"question": q.question, "choices": list(q.choices), "until": q.until, "video_id": q.video_id}
            with http.stream("POST", "/ask", json=body) as reply:
                replies[n] = sse(reply.iter_lines())

        askers = [threading.Thread(target=ask, args=(n,)) for n in range(len(questions))]
        for asker in askers:
            asker.start()
        for asker in askers:
            asker.join(300)
        assert http.get("/ingest/1").json()["state"] == "running"
        for n, events in enumerate(replies):
            assert events is not None and events[-1][0] == "answer", (n, events and events[-1])
            assert _answered(events[-1][1]) == expected[n], n

        models.vision.go.set()
        assert app.state.jobs.get(1).ended.wait(300)
        job = http.get("/ingest/1").json()
        assert job["state"] == "done" and not job["failures"], job
        # the readers reopened after the ingest: the new video's caption is searchable
        found = http.get("/memories/events/search", params={"query": "street", "video_id": "bikes"}).json()
        assert [e["video_id"] for e in found] == ["bikes"]


# ------------------------------------------------------------------ the command


@pytest.mark.slow
def test_videomem_serve_binds_locally_and_takes_the_token_from_the_environment(scripted) -> None:
    store_dir, _ = scripted
    command = [sys.executable, "-m", "videomem.cli", "serve", "--store", str(store_dir), "--port", "0",
               "--agent", str(default_path("agents", "caption-rag"))]
    server = subprocess.Popen(command, env={**os.environ, "VIDEOMEM_TOKEN": "s3cret"}, stderr=subprocess.PIPE, text=True)
    try:
        for line in server.stderr:
            if "Uvicorn running on " in line:
                base = line.split("Uvicorn running on ")[1].split()[0]
                break
        else:
            raise AssertionError(f"videomem serve exited with {server.wait()} before serving")
        assert base.startswith("http://127.0.0.1:")
        assert httpx.get(f"{base}/info").status_code == 401
        info = httpx.get(f"{base}/info", headers={"Authorization": "Bearer s3cret"}).json()
        assert info["agent"]["kind"] == "caption_rag" and [v["id"] for v in info["videos"]] == ["synth0000"]
    finally:
        server.terminate()
        _, rest = server.communicate(timeout=60)
    # uvicorn shuts down cleanly on SIGTERM, then re-raises it
    assert "Finished server process" in rest and server.returncode == -signal.SIGTERM


def test_videomem_serve_without_a_store_is_one_line(tmp_path, run_cli) -> None:
    result = run_cli("serve", "--store", tmp_path / "none")
    assert result.code == 2 and "no store here" in result.stderr and result.stderr.count("\n") == 1
