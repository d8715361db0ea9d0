"""What a hostile client cannot do to a served store or its machine (issue 29), each as the
probe did it: against a live `videomem serve` app on 127.0.0.1.

1. a video id that names a folder (`...mp4` → `..`) cannot delete or write outside the store;
2. `POST /ingest`'s `pipeline` reads no file outside the ingest roots and echoes none;
3. `POST /ingest`'s `paths` reads nothing outside the ingest roots (none: remote ingest is off);
4. requests naming a foreign Host (DNS rebinding) or Origin (another site) are refused.
"""

from __future__ import annotations

import http.client
import logging
import os
import shutil
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import quote, quote_plus, urlsplit

import anyio
import httpx
import numpy as np
import pytest
from live_server import live
from mcp import Client
from memory_stores import offline_models

from videomem.agent.tools import MAX_TOP_K
from videomem.config import load_agent
from videomem.errors import ConfigError, TimeFormatError, VideoIdError
from videomem.models.tasks.agent import ToolCall
from videomem.models.recent import RecentTexts
from videomem.core import VideoSource
from videomem.pipeline.runner import discover_sources
from videomem.server.app import create_app
from videomem.server.jobs import IngestRequest
from videomem.server.guards import LOOPBACK_HOSTS, MAX_BODY_BYTES, trusted_hosts
from videomem.server.mcp_server import build_server
from videomem.server.readers import MAX_QUESTION_CHARS, Readers
from videomem.store import Store
from videomem.core import MAX_ID_BYTES
from videomem.timeline import parse_time

SECRET = "TOPSECRET-7f3a"


@pytest.fixture(scope="module")
def served(tmp_path_factory, bikes):
    """A live server over a store holding `bikes`, with one ingest root; yields (base URL,
    store dir, ingest root, a folder outside the root)."""
    base = tmp_path_factory.mktemp("security")
    root, outside, store_dir = base / "root", base / "outside", base / "store"
    root.mkdir()
    outside.mkdir()
    shutil.copyfile(bikes, root / "bikes.mp4")
    Store(store_dir, create=True).close()
    app = create_app(store_dir, offline_models(), load_agent(), ingest_roots=[root])
    with live(app) as url, httpx.Client(base_url=url, timeout=120) as client:
        assert ingest(client, app, {"paths": [str(root / "bikes.mp4")], "stages": ["sample"]})["state"] == "done"
        yield client, app, store_dir, root, outside


def ingest(client: httpx.Client, app, body: dict) -> dict:
    """Start an ingest and wait for it; the finished job."""
    started = client.post("/ingest", json=body)
    assert started.status_code == 202, started.text
    job_id = started.json()["id"]
    assert app.state.jobs.get(job_id).ended.wait(120)
    return client.get(f"/ingest/{job_id}").json()


def stored_frames(store_dir: Path) -> list[Path]:
    return sorted((store_dir / "frames").rglob("*.jpg"))


# ------------------------------------------------------------------ 1. video ids


def test_a_forced_ingest_of_a_file_named_like_a_folder_leaves_the_store_whole(served) -> None:
    client, app, store_dir, root, _ = served
    frames = stored_frames(store_dir)
    assert frames
    folder = root / "dots"
    folder.mkdir()
    for name in ("...mp4", "..mp4"):  # ids `..` and `.`: the store's own folder and frames/
        (folder / name).write_text("x")
        job = ingest(client, app, {"paths": [str(folder / name)], "force": True, "stages": ["sample"]})
        assert (store_dir / "memory.sqlite").is_file() and stored_frames(store_dir) == frames, name
        assert job["state"] == "done" and len(job["failures"]) == 1, job
        assert job["failures"][0][0] == str(folder / name) and "cannot be a video id" in job["failures"][0][1]
    assert (store_dir / "memory.sqlite").is_file() and stored_frames(store_dir) == frames
    assert [v["id"] for v in client.get("/info").json()["videos"]] == ["bikes"]


def test_video_ids_follow_one_rule_wherever_they_are_made(tmp_path) -> None:
    bad = ["...mp4", "..mp4", "a:b.mp4", "tab\there.mp4", "x" * (MAX_ID_BYTES + 1) + ".mp4", "é" * 101 + ".mp4"]
    for name in [*bad, "fine name é.mp4", ".hidden.mp4"]:
        (tmp_path / name).write_text("x")
    sources, failures = discover_sources([tmp_path / name for name in [*bad, "fine name é.mp4", ".hidden.mp4"]])
    assert [s.video_id for s in sources] == ["fine name é", ".hidden"]
    assert [f[0] for f in failures] == [str(tmp_path / name) for name in bad]
    assert all("cannot be a video id" in why for _, why in failures)
    for video_id in ("..", ".", "", "a/b", "a\\b", "a\x00b"):
        with pytest.raises(VideoIdError):
            VideoSource(tmp_path / "v.mp4", video_id)  # what the Ray runner and benchmarks build


def test_the_cli_force_deletes_nothing_outside_the_store(tmp_path, run_cli) -> None:
    Store(tmp_path / "store", create=True).close()
    frame = tmp_path / "store" / "frames" / "kept" / "000000_0.jpg"  # frames/ exists: `frames/..` is the store
    frame.parent.mkdir(parents=True)
    frame.write_bytes(b"jpeg")
    (tmp_path / "...mp4").write_text("x")
    result = run_cli("ingest", tmp_path / "...mp4", "--store", tmp_path / "store", "--force", "--stages", "sample")
    assert (tmp_path / "store" / "memory.sqlite").is_file() and frame.is_file() and (tmp_path / "...mp4").is_file()
    assert result.code == 1 and "cannot be a video id" in result.stderr


# ------------------------------------------------------------------ 2. pipeline profiles


def test_a_pipeline_profile_is_read_only_from_the_shipped_set_or_an_ingest_root(served) -> None:
    client, app, _, root, outside = served
    secret = outside / "secret.yaml"
    secret.write_text(f"api_key: {SECRET}\n")
    for given in (str(secret), "/etc/passwd", "../../etc/passwd", "pipelines/default.yaml"):
        reply = client.post("/ingest", json={"paths": [str(root)], "pipeline": given})
        assert reply.status_code == 403 and "neither a shipped profile" in reply.json()["detail"], given
        assert SECRET not in reply.text and "root:" not in reply.text
    inside = root / "bad.yaml"
    for text in (f"clip_seconds: {SECRET}\n", f"{SECRET}: 1\n", f"- {SECRET}\n", f"a: [{SECRET}\n"):
        inside.write_text(text)
        reply = client.post("/ingest", json={"paths": [str(root)], "pipeline": str(inside)})
        assert reply.status_code == 400 and reply.json()["detail"].startswith(str(inside)), text
        assert SECRET not in reply.text, text
    assert ingest(client, app, {"paths": [str(root / "bikes.mp4")], "pipeline": "default", "stages": ["sample"]})["state"] == "done"


# ------------------------------------------------------------------ 3. ingest roots


def test_ingest_reads_nothing_outside_its_roots(served, bikes) -> None:
    client, app, store_dir, root, outside = served
    for paths in (["/usr"], [str(outside)], [str(root / ".." / "outside")], ["bikes.mp4"], [""], [str(root), "/"]):
        reply = client.post("/ingest", json={"paths": paths, "stages": ["sample"]})
        assert reply.status_code in (403, 422), paths
    shutil.copyfile(bikes, outside / "copied.mp4")
    (root / "links").mkdir()
    os.symlink(outside / "copied.mp4", root / "links" / "copied.mp4")  # a link inside the root leading out
    job = ingest(client, app, {"paths": [str(root / "links")], "stages": ["sample"]})
    assert job["failures"] == [[str(root / "links" / "copied.mp4"), "leads outside the server's ingest roots"]]
    assert client.get("/videos/copied").status_code == 404


def test_without_an_ingest_root_remote_ingest_is_off(tmp_path, bikes) -> None:
    Store(tmp_path / "store", create=True).close()
    app = create_app(tmp_path / "store", offline_models(), load_agent())
    with live(app) as url:
        reply = httpx.post(f"{url}/ingest", json={"paths": [str(bikes)]})
    assert reply.status_code == 403 and "remote ingest is off" in reply.json()["detail"]
    assert app.state.jobs.all() == []


# ------------------------------------------------------------------ 4. Host and Origin


def _get(base: str, headers: dict[str, str]) -> int:
    """GET /info with exactly these headers (httpx would set Host itself)."""
    url = urlsplit(base)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
    try:
        conn.putrequest("GET", "/info", skip_host="Host" in headers)
        for name, value in headers.items():
            conn.putheader(name, value)
        conn.endheaders()
        return conn.getresponse().status
    finally:
        conn.close()


def test_a_foreign_host_or_origin_is_refused(served) -> None:
    client, *_ = served
    base = str(client.base_url).rstrip("/")
    port = urlsplit(base).port
    assert _get(base, {}) == 200
    assert _get(base, {"Host": f"localhost:{port}"}) == 200
    assert _get(base, {"Host": f"[::1]:{port}"}) == 200
    assert _get(base, {"Host": f"attacker.example:{port}"}) == 400  # DNS rebinding
    assert _get(base, {"Host": "attacker.example"}) == 400
    assert _get(base, {"Origin": f"http://127.0.0.1:{port}"}) == 200  # the page itself
    assert _get(base, {"Origin": "http://attacker.example"}) == 403
    assert _get(base, {"Origin": "null"}) == 403
    reply = client.post("/ingest", json={"paths": ["/usr"]}, headers={"Origin": "http://attacker.example"})
    assert reply.status_code == 403 and reply.json()["detail"] == "cross-site request refused"


def test_the_trusted_names_follow_the_bound_address() -> None:
    assert trusted_hosts("127.0.0.1") == trusted_hosts("::1") == trusted_hosts("localhost") == list(LOOPBACK_HOSTS)
    assert trusted_hosts("127.0.0.1", ["videos.lan"]) == [*LOOPBACK_HOSTS, "videos.lan"]
    assert trusted_hosts("0.0.0.0") == ["*"]  # beyond loopback a token is required (item 10)
    assert trusted_hosts("0.0.0.0", ["videos.lan"]) == [*LOOPBACK_HOSTS, "videos.lan"]


# ------------------------------------------------------------------ 10. binding beyond loopback


@pytest.mark.parametrize("command", [["serve"], ["mcp", "--http"]])
def test_binding_beyond_loopback_without_a_token_is_refused(tmp_path, run_cli, monkeypatch, command) -> None:
    monkeypatch.delenv("VIDEOMEM_TOKEN", raising=False)
    Store(tmp_path / "store", create=True).close()
    result = run_cli(*command, "--store", tmp_path / "store", "--host", "0.0.0.0", "--port", "1")
    assert result.code == 2 and result.stderr.count("\n") == 1
    assert "--host 0.0.0.0 serves beyond this machine: give an API token" in result.stderr


# ------------------------------------------------------------------ 9. the token


class Lines(logging.Handler):
    """Every line a logger writes."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def test_the_token_is_taken_from_a_header_or_the_one_time_login_and_never_logged(tmp_path) -> None:
    token = "пароль-🔑 s3cret"  # not Latin-1
    Store(tmp_path / "store", create=True).close()
    app = create_app(tmp_path / "store", offline_models(), load_agent(), token=token)
    access, written = logging.getLogger("uvicorn.access"), Lines()
    with live(app, log_level="info") as url, httpx.Client(base_url=url, timeout=60) as client:
        access.addHandler(written)
        try:
            assert client.get("/info", headers={"Authorization": b"Bearer " + token.encode()}).status_code == 200
            assert client.get("/info", params={"token": token}).status_code == 401  # not on other routes
            assert client.get("/info", headers={"Authorization": b"Bearer " + token.encode()[:-1]}).status_code == 401
            login = client.get("/", params={"token": token})
            assert login.status_code == 303 and login.headers["location"] == "/"
            assert client.get("/info").status_code == 200  # the cookie from here on
        finally:
            access.removeHandler(written)
    assert any("GET /info" in line for line in written.lines) and any("GET / " in line for line in written.lines)
    logged = "\n".join(written.lines)
    assert token not in logged and quote(token) not in logged and quote_plus(token) not in logged


# ------------------------------------------------------------------ 5. abandoned questions

STEP = 0.5


class SlowPlanner:
    """The offline language model, except that each plan step takes STEP seconds and never
    finishes, so a question runs to its step limit: the slowness a dropped client must not keep
    paying for (a double because a real model is not reliably slow)."""

    def __init__(self, real: object) -> None:
        self.real = real
        self.steps = 0

    def __getattr__(self, name: str) -> object:
        return getattr(self.real, name)

    def plan_step(self, state) -> ToolCall:
        self.steps += 1
        time.sleep(STEP)
        return ToolCall(thought="look again", tool="video.retrieval", arguments={"query": state.question})


class SlowModels:
    def __init__(self) -> None:
        self.real = offline_models()
        self.language = SlowPlanner(self.real.language)

    def __getattr__(self, name: str) -> object:
        return getattr(self.real, name)


def test_a_question_whose_client_left_stops_and_frees_its_thread(served) -> None:
    _, _, store_dir, *_ = served
    models = SlowModels()
    agent = load_agent().model_copy(update={"max_steps": 30})  # 15 s of steps if it ran to the end
    with live(create_app(store_dir, models, agent, threads=1)) as url:
        with httpx.Client(base_url=url, timeout=60) as client, client.stream("POST", "/ask", json={"question": "Where?"}) as reply:
            assert next(line for line in reply.iter_lines() if line.startswith("event:")) == "event: step"
        started = time.monotonic()
        assert httpx.get(f"{url}/info", timeout=60).status_code == 200  # on the one reader thread
        assert time.monotonic() - started < 6 * STEP
        steps = models.language.steps
        time.sleep(4 * STEP)
        assert models.language.steps == steps < 6


# ------------------------------------------------------------------ 6. bounded requests


def test_questions_and_request_bodies_are_bounded(served) -> None:
    client, *_ = served
    started = time.monotonic()
    huge = client.post("/ask", json={"question": "where? " * 300_000})  # 2 MB
    assert huge.status_code == 413 and huge.json()["detail"] == f"request body over {MAX_BODY_BYTES} bytes"
    for body, where in [
        ({"question": "x" * (MAX_QUESTION_CHARS + 1)}, "question"),
        ({"question": "Which?", "choices": ["a", "b" * (MAX_QUESTION_CHARS + 1)]}, 1),
        ({"question": "Which?", "video_id": "v" * 1000}, "video_id"),
    ]:
        reply = client.post("/ask", json=body)
        assert reply.status_code == 422 and reply.json()["detail"][0]["loc"][-1] == where
    chunked = client.post("/ingest", content=(b"x" * 65536 for _ in range(40)))  # no declared length
    assert chunked.status_code == 413
    assert time.monotonic() - started < 10


# ------------------------------------------------------------------ 7. shared models across threads


class OneAtATime:
    """A text embedder that records how many threads are inside it at once (a double: whether
    a real tokenizer breaks under a race is chance; whether two threads get in is not)."""

    dim = 4

    def __init__(self) -> None:
        self.inside = self.most = 0
        self.lock = threading.Lock()

    def embed(self, texts: list[str]) -> np.ndarray:
        with self.lock:
            self.inside += 1
            self.most = max(self.most, self.inside)
        time.sleep(0.01)
        with self.lock:
            self.inside -= 1
        return np.ones((len(texts), self.dim), dtype=np.float32)


def test_the_shared_text_embedder_is_called_by_one_thread_at_a_time() -> None:
    double = OneAtATime()
    recent = RecentTexts(double)
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda n: recent.embed([f"question {n}"]), range(64)))
    assert double.most == 1

    embedder = offline_models().text_embedder  # the real one, as a server's threads share it
    texts = [f"where did person {n} leave the {thing}?" for n in range(16) for thing in ("keys", "cup")]
    with ThreadPoolExecutor(8) as pool:
        together = list(pool.map(lambda t: embedder.embed([t])[0], texts))
    alone = embedder.embed(texts)
    assert np.allclose(np.stack(together), alone, atol=1e-5)


# ------------------------------------------------------------------ 8. profiles off the event loop


def test_a_profile_is_read_off_the_event_loop_and_a_huge_one_is_refused(served, monkeypatch) -> None:
    client, app, _, root, _ = served
    huge = root / "huge.yaml"
    huge.write_text("clip_seconds: 10\n" + "# padding\n" * 600_000)  # 6 MB
    started = time.monotonic()
    reply = client.post("/ingest", json={"paths": [str(root / "bikes.mp4")], "pipeline": str(huge)})
    assert reply.status_code == 400 and reply.json()["detail"] == f"{huge}: larger than 1 MiB, not a profile"
    assert time.monotonic() - started < 2

    reading, go = threading.Event(), threading.Event()

    def slow_load(path):  # a profile that takes long to read: the server must answer meanwhile
        reading.set()
        assert go.wait(60)
        raise ConfigError(f"{path}: read at last")

    monkeypatch.setattr("videomem.server.jobs.load_pipeline", slow_load)
    with ThreadPoolExecutor(1) as pool:
        pending = pool.submit(client.post, "/ingest", json={"paths": [str(root / "bikes.mp4")]})
        assert reading.wait(30)
        assert client.get("/ingest", timeout=5).status_code == 200
        go.set()
        assert pending.result().json()["detail"].endswith("read at last")


# ------------------------------------------------------------------ 11. bad input, one clear line


def test_times_that_are_not_finite_numbers_are_refused(served) -> None:
    client, _, store_dir, *_ = served
    for until in ("nan", "inf", "-inf", "1e999", "9" * 5000):
        with pytest.raises(TimeFormatError):
            parse_time(until)
        reply = client.get("/memories/events/search", params={"query": "bike", "until": until})
        assert reply.status_code == 400 and "time" in reply.json()["detail"], until
        assert client.post("/ask", json={"question": "Where?", "until": until}).status_code == 422
    with pytest.raises(TimeFormatError):
        parse_time(float("nan"))

    readers = Readers(store_dir, offline_models(), load_agent())

    async def session():
        async with Client(build_server(readers)) as mcp:
            until = await mcp.call_tool("memory.events", {"query": "bike", "until": "nan"})
            finish = await mcp.call_tool("finish", {"answer": "done"})
            top = await mcp.call_tool("memory.events", {"query": "bike", "top_k": MAX_TOP_K + 1})
            return until, finish, top

    try:
        until, finish, top = anyio.run(session)
    finally:
        readers.close()
    assert until.is_error and "not a finite number" in until.content[0].text
    assert finish.is_error and finish.content[0].text == "unknown tool 'finish'"  # the planner's, not a tool
    assert top.is_error and "top_k" in top.content[0].text
    assert client.get("/memories/events/search", params={"query": "bike", "top_k": MAX_TOP_K + 1}).status_code == 422


def test_bad_ingest_paths_are_failures_of_their_own_and_unknown_fields_are_refused(served, tmp_path, monkeypatch) -> None:
    client, app, store_dir, root, _ = served
    locked = root / "locked"
    (locked / "inner").mkdir(parents=True)
    shutil.copyfile(root / "bikes.mp4", locked / "bikes2.mp4")
    (locked / "inner").chmod(0)
    try:
        job = ingest(client, app, {"paths": [str(locked), str(root / ("n" * 300 + ".mp4"))], "stages": ["sample"]})
    finally:
        (locked / "inner").chmod(0o755)
    assert job["state"] == "done" and job["results"][0]["done"] == 1, job
    why = dict(job["failures"])
    assert why[str(root / ("n" * 300 + ".mp4"))] == "File name too long"
    if os.geteuid() != 0:  # root reads any folder
        assert why[str(locked / "inner")] == "Permission denied"

    reply = client.post("/ingest", json={"paths": [str(root)], "store": "/elsewhere"})
    assert reply.status_code == 422 and reply.json()["detail"][0]["loc"][-1] == "store"

    sources, failures = discover_sources([""])
    assert sources == [] and failures == [("''", "an empty path")]
    monkeypatch.chdir(tmp_path)
    shutil.copyfile(root / "bikes.mp4", tmp_path / "here.mp4")
    sources, _ = discover_sources(["here.mp4"])
    assert sources[0].path == tmp_path / "here.mp4"  # stored as an absolute path


def test_ingest_workers_are_capped_at_the_machines_cores(served) -> None:
    client, *_ = served
    cores = os.cpu_count() or 1
    reply = client.post("/ingest", json={"paths": ["/x.mp4"], "workers": cores + 1})
    assert reply.status_code == 422
    detail = reply.json()["detail"][0]
    assert detail["loc"][-1] == "workers" and f"at most {cores} decode processes" in detail["msg"]
    assert IngestRequest(paths=["/x.mp4"], workers=cores).workers == cores


def test_a_missing_video_file_does_not_show_the_servers_path(tmp_path, served) -> None:
    client, app, store_dir, root, _ = served
    shutil.copyfile(root / "bikes.mp4", root / "gone.mp4")
    assert ingest(client, app, {"paths": [str(root / "gone.mp4")], "stages": ["sample"]})["state"] == "done"
    (root / "gone.mp4").unlink()
    reply = client.get("/videos/gone")
    assert reply.status_code == 404 and reply.json()["detail"] == "the file of video 'gone' is missing"
    assert str(root) not in reply.text
