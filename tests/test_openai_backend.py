"""The openai backend against a local OpenAI-compatible server that records what it receives."""

from __future__ import annotations

import base64
import io
import json
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import pytest
from PIL import Image

from videomem.config import RoleConfig
from videomem.errors import ModelError
from videomem.models.engines import LMRequest, VLRequest
from videomem.models.tasks.agent import ToolCall
from videomem.models.tasks.captioning import CaptionOut
from videomem.models.usage import UsageMeter
from videomem.models.openai_compat import OpenAICompatEmbedder, OpenAICompatEngine


@dataclass
class Reply:
    status: int = 200
    body: dict[str, Any] | None = None
    delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class FakeServer:
    """What the server saw, and what it will answer next (a default completion when empty)."""

    port: int
    requests: list[dict[str, Any]] = field(default_factory=list)
    script: list[Reply] = field(default_factory=list)
    in_flight: int = 0
    peak: int = 0
    models: list[dict[str, Any]] | None = None
    """What GET /models lists (None: the route is missing, 404)."""
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"


def completion(text: str = '{"caption": "A red square."}', prompt_tokens: int = 12, completion_tokens: int = 3) -> dict:
    return {
        "id": "cmpl-1",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens},
    }


def make_handler(state: FakeServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            found = self.path.endswith("/models") and state.models is not None
            data = json.dumps({"object": "list", "data": state.models} if found else {"detail": "Not Found"}).encode()
            self.send_response(200 if found else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with state.lock:
                state.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                reply = state.script.pop(0) if state.script else None
                state.in_flight += 1
                state.peak = max(state.peak, state.in_flight)
            if reply is None:
                reply = Reply(body=self.default(body))
            time.sleep(reply.delay)
            with state.lock:
                state.in_flight -= 1
            data = json.dumps(reply.body or {}).encode()
            try:
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout test)

        def default(self, body: dict[str, Any]) -> dict[str, Any]:
            if self.path.endswith("/embeddings"):
                # Unnormalised rows in reverse index order: the client must sort and normalise.
                rows = [{"index": i, "embedding": [float(len(text)), 1.0, 2.0]} for i, text in enumerate(body["input"])]
                return {"data": rows[::-1], "usage": {"prompt_tokens": 4 * len(rows)}}
            return completion()

    return Handler


@pytest.fixture
def server() -> Iterator[FakeServer]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    state = FakeServer(port=httpd.server_address[1])
    httpd.RequestHandlerClass = make_handler(state)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield state
    httpd.shutdown()
    httpd.server_close()


def role(url: str, **overrides: Any) -> RoleConfig:
    return RoleConfig.model_validate({"backend": "openai", "model": "qwen-test", "base_url": url, **overrides})


def red_frame() -> Image.Image:
    return Image.new("RGB", (64, 48), (220, 20, 20))


def test_exact_chat_request_with_images_schema_and_key(server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VIDEOMEM_TEST_KEY", "sekret")
    meter = UsageMeter()
    engine = OpenAICompatEngine(role(server.url, api_key_env="VIDEOMEM_TEST_KEY", max_tokens=77), "vlm", meter)
    request = VLRequest("Caption this clip.", [red_frame(), red_frame()], "Be brief.", CaptionOut.model_json_schema())
    [generation] = engine.generate([request])

    assert generation.text == '{"caption": "A red square."}'
    [seen] = server.requests
    assert seen["path"] == "/v1/chat/completions"
    assert seen["headers"]["Authorization"] == "Bearer sekret"
    body = seen["body"]
    assert body["model"] == "qwen-test" and body["max_completion_tokens"] == 77 and "max_tokens" not in body
    assert "temperature" not in body, "the profile sets none: reasoning models reject any but their default"
    system, user = body["messages"]
    assert system == {"role": "system", "content": "Be brief."}
    assert user["role"] == "user"
    parts = user["content"]
    assert [p["type"] for p in parts] == ["image_url", "image_url", "text"]
    assert parts[2]["text"].startswith("Caption this clip.\n\nReply with one JSON object") and '"caption"' in parts[2]["text"]
    url = parts[0]["image_url"]["url"]
    assert url.startswith("data:image/jpeg;base64,")
    decoded = Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))
    assert decoded.format == "JPEG" and decoded.size == (64, 48)
    r, g, b = decoded.convert("RGB").getpixel((32, 24))
    assert r > 180 and g < 60 and b < 60
    response_format = body["response_format"]
    assert response_format["type"] == "json_schema"
    spec = response_format["json_schema"]
    assert spec["name"] == "CaptionOut" and spec["strict"] is True
    assert spec["schema"]["additionalProperties"] is False and spec["schema"]["required"] == ["caption"]
    assert "minLength" not in json.dumps(spec["schema"])

    usage = meter.by_role()["vlm"]
    assert (usage.prompt_tokens, usage.completion_tokens, usage.calls) == (12, 3, 1)
    assert usage.seconds > 0 and generation.usage.completion_tokens == 3


def test_free_form_schema_is_sent_non_strict_and_text_only_content_is_a_string(server: FakeServer) -> None:
    engine = OpenAICompatEngine(role(server.url), "llm", UsageMeter())
    engine.generate([LMRequest("Plan.", json_schema=ToolCall.model_json_schema())])
    body = server.requests[0]["body"]
    assert body["messages"][0]["content"].startswith("Plan.\n\nReply with one JSON object")
    spec = body["response_format"]["json_schema"]
    assert spec["strict"] is False and spec["schema"] == ToolCall.model_json_schema()
    assert "Authorization" not in server.requests[0]["headers"]


def test_without_structured_output_the_schema_goes_into_the_prompt(server: FakeServer) -> None:
    engine = OpenAICompatEngine(role(server.url, structured_output=False), "llm", UsageMeter())
    engine.generate([LMRequest("Caption.", json_schema=CaptionOut.model_json_schema())])
    body = server.requests[0]["body"]
    assert "response_format" not in body
    assert body["messages"][0]["content"].startswith("Caption.\n\nReply with one JSON object")
    assert '"caption"' in body["messages"][0]["content"]


def test_the_schema_leaves_the_prompt_only_where_the_server_enforces_it(server: FakeServer) -> None:
    """A server that ignores response_format (transformers serve) must still show the model the
    schema; vLLM (owned_by "vllm" in GET /models) constrains decoding, so the prompt stays short."""
    request = LMRequest("Caption.", json_schema=CaptionOut.model_json_schema())
    server.models = [{"id": "qwen-test", "object": "model", "owned_by": "transformers"}]
    OpenAICompatEngine(role(server.url), "llm", UsageMeter()).generate([request])
    server.models = [{"id": "qwen-test", "object": "model", "owned_by": "vllm"}]
    OpenAICompatEngine(role(server.url), "llm", UsageMeter()).generate([request])
    ignoring, enforcing = (r["body"] for r in server.requests)
    assert '"caption"' in ignoring["messages"][0]["content"] and "response_format" in ignoring
    assert enforcing["messages"][0]["content"] == "Caption." and "response_format" in enforcing


def test_temperature_goes_out_only_when_the_profile_sets_it(server: FakeServer) -> None:
    OpenAICompatEngine(role(server.url, temperature=0), "llm", UsageMeter()).generate([LMRequest("Hi.")])
    OpenAICompatEngine(role(server.url), "llm", UsageMeter()).generate([LMRequest("Hi.")])
    set_, unset = (r["body"] for r in server.requests)
    assert set_["temperature"] == 0 and "temperature" not in unset


def test_a_fastapi_error_body_is_printed_as_its_message(server: FakeServer) -> None:
    server.script = [Reply(status=400, body={"detail": "Model qwen-test is not loaded"})]
    engine = OpenAICompatEngine(role(server.url, structured_output=False), "llm", UsageMeter())
    with pytest.raises(ModelError) as info:
        engine.generate([LMRequest("Hi.")])
    assert "HTTP 400: Model qwen-test is not loaded" in str(info.value) and "{" not in str(info.value)


def test_retries_a_500_then_succeeds(server: FakeServer) -> None:
    server.script = [Reply(500, {"error": {"message": "overloaded"}})]
    meter = UsageMeter()
    engine = OpenAICompatEngine(role(server.url, max_retries=2), "vlm", meter)
    waits: list[float] = []
    engine.client.sleep = waits.append
    [generation] = engine.generate([LMRequest("hi")])
    assert generation.text == '{"caption": "A red square."}'
    assert len(server.requests) == 2 and server.requests[0]["body"] == server.requests[1]["body"]
    assert meter.by_role()["vlm"].calls == 1
    assert waits == [2.0], "backoff starts at 2 s"


def test_retry_after_on_429_and_503_is_honoured(server: FakeServer) -> None:
    server.script = [
        Reply(429, {"error": {"message": "slow down"}}, headers={"Retry-After": "7"}),
        Reply(503, {"error": {"message": "loading"}}, headers={"Retry-After": "1"}),
        Reply(500, {"error": {"message": "oops"}}, headers={"Retry-After": "30"}),
    ]
    engine = OpenAICompatEngine(role(server.url, max_retries=3), "vlm", UsageMeter())
    waits: list[float] = []
    engine.client.sleep = waits.append
    [generation] = engine.generate([LMRequest("hi")])
    assert generation.text == '{"caption": "A red square."}' and len(server.requests) == 4
    assert waits == [7.0, 4.0, 8.0], "the server's wait, never less than the backoff; a 500's header is not a 429's"


def test_gives_up_after_the_retries_with_one_line(server: FakeServer) -> None:
    server.script = [Reply(503, {"error": {"message": "model is\nloading"}})] * 2
    engine = OpenAICompatEngine(role(server.url, max_retries=1), "vlm", UsageMeter())
    engine.client.sleep = lambda seconds: None
    with pytest.raises(ModelError) as info:
        engine.generate([LMRequest("hi")])
    message = str(info.value)
    assert "\n" not in message and len(server.requests) == 2
    assert f"{server.url}/chat/completions" in message and "vlm" in message
    assert "HTTP 503: model is loading" in message and "after 2 attempts" in message


def test_a_client_error_is_not_retried(server: FakeServer) -> None:
    server.script = [Reply(400, {"error": {"message": "unknown model qwen-test"}})]
    with pytest.raises(ModelError, match="HTTP 400: unknown model qwen-test"):
        OpenAICompatEngine(role(server.url, max_retries=3), "llm", UsageMeter()).generate([LMRequest("hi")])
    assert len(server.requests) == 1


def test_timeout_is_a_clear_error(server: FakeServer) -> None:
    server.script = [Reply(body=completion(), delay=1.0)]
    engine = OpenAICompatEngine(role(server.url, timeout_s=0.2, max_retries=0), "vlm", UsageMeter())
    started = time.perf_counter()
    with pytest.raises(ModelError) as info:
        engine.generate([LMRequest("hi")])
    assert time.perf_counter() - started < 0.9
    message = str(info.value)
    assert "\n" not in message and server.url in message and "no answer within 0.2 s" in message


@pytest.fixture
def silent_url() -> Iterator[str]:
    """A server that accepts connections (the kernel completes them) and never replies."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1"


def test_a_server_that_never_replies_fails_by_the_request_deadline(silent_url: str) -> None:
    engine = OpenAICompatEngine(role(silent_url, timeout_s=0.4, max_retries=10, deadline_s=1.0), "llm", UsageMeter())
    started = time.perf_counter()
    with pytest.raises(ModelError) as info:
        engine.generate([LMRequest("hi")])
    assert time.perf_counter() - started < 1.6  # not 11 attempts of 0.4 s plus backoff
    assert str(info.value).endswith("no answer by the request deadline (1 s, deadline_s)"), "no retry fits before it"
    assert RoleConfig(backend="offline").deadline_s <= 300  # the default fails within minutes


def test_ask_against_a_server_that_never_replies_is_one_line_within_the_deadline(silent_url, run_cli, tmp_path) -> None:
    from memory_stores import hand_store

    hand_store(tmp_path / "s", ["TRAIN TO PARIS"]).close()
    served = f"{{backend: openai, model: m, base_url: '{silent_url}', timeout_s: 0.3, deadline_s: 0.8}}"
    profile = tmp_path / "silent.yaml"
    profile.write_text(f"vlm: {served}\nllm: {served}\ntext_embedder: {{backend: offline}}\n")
    started = time.perf_counter()
    result = run_cli("ask", "Which train?", "--store", tmp_path / "s", "--models", profile, "--choices", "Paris,Rome")
    assert time.perf_counter() - started < 3  # the old agent re-asked the planner: 3 requests, then the answer
    assert result.code == 2 and result.stderr.count("\n") == 1 and "Traceback" not in result.output
    assert "llm (openai backend, model 'm')" in result.stderr and "no answer by the request deadline" in result.stderr


def test_unreachable_port_names_the_url_and_role() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    with pytest.raises(ModelError) as info:
        OpenAICompatEngine(role(url, max_retries=0), "vlm", UsageMeter()).generate([LMRequest("hi")])
    message = str(info.value)
    assert "\n" not in message and f"{url}/chat/completions" in message
    assert message.startswith("vlm (openai backend, model 'qwen-test')") and "cannot connect" in message


def test_missing_api_key_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VIDEOMEM_ABSENT_KEY", raising=False)
    with pytest.raises(ModelError, match="VIDEOMEM_ABSENT_KEY"):
        OpenAICompatEngine(role("http://127.0.0.1:1/v1", api_key_env="VIDEOMEM_ABSENT_KEY"), "llm", UsageMeter())


def test_batch_runs_concurrently_up_to_the_limit_and_keeps_order(server: FakeServer) -> None:
    server.script = [Reply(body=completion(f"reply {i}"), delay=0.2) for i in range(4)]
    engine = OpenAICompatEngine(role(server.url, concurrency=2), "llm", UsageMeter())
    prompts = [f"prompt {i}" for i in range(4)]
    generations = engine.generate([LMRequest(p) for p in prompts])
    assert server.peak == 2
    # Replies are handed out in arrival order; each must come back to the request it answers.
    by_prompt = {r["body"]["messages"][0]["content"]: i for i, r in enumerate(server.requests)}
    assert [g.text for g in generations] == [f"reply {by_prompt[p]}" for p in prompts]


def test_embedder_batches_sorts_and_normalises(server: FakeServer) -> None:
    meter = UsageMeter()
    embedder = OpenAICompatEmbedder(role(server.url, model="embed-test", batch_size=2), "text_embedder", meter)
    assert embedder.dim == 3 and len(server.requests) == 1, "dim learnt from one probe request"
    vectors = embedder.embed(["a", "bbb", "cccccc"])
    assert vectors.dtype == np.float32 and vectors.shape == (3, 3)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    raw = np.array([[1, 1, 2], [3, 1, 2], [6, 1, 2]], dtype=np.float32)
    assert np.allclose(vectors, raw / np.linalg.norm(raw, axis=1, keepdims=True))
    assert [r["body"]["input"] for r in server.requests[1:]] == [["a", "bbb"], ["cccccc"]]
    assert server.requests[1]["path"] == "/v1/embeddings" and server.requests[1]["body"]["model"] == "embed-test"
    assert meter.by_role()["text_embedder"].prompt_tokens == 4 + 8 + 4


def test_embedder_dim_from_options_skips_the_probe(server: FakeServer) -> None:
    embedder = OpenAICompatEmbedder(role(server.url, options={"dim": 3}), "text_embedder", UsageMeter())
    assert embedder.dim == 3 and server.requests == []
    assert embedder.embed([]).shape == (0, 3)


def test_model_set_runs_prompted_tasks_through_the_server(server: FakeServer) -> None:
    from videomem.config import ModelsConfig
    from videomem.core import ClipView
    from videomem.models.registry import ModelSet

    remote = {"backend": "openai", "model": "qwen-test", "base_url": server.url}
    models = ModelSet(ModelsConfig.model_validate({"vlm": remote, "llm": remote, "text_embedder": {"backend": "offline"}}))
    server.script = [
        Reply(body=completion("Here you go:\n```json\n{\"caption\": \"A red frame.\"}\n```")),
        Reply(body=completion('{"summary": ""}')),
        Reply(body=completion('{"summary": "Red frames throughout."}', prompt_tokens=30, completion_tokens=6)),
    ]
    clip = ClipView("v", 0.0, 10.0, [red_frame()], [5.0], "look at this")
    assert models.vision.caption_clips([clip]) == ["A red frame."]
    assert models.language.summarise([["A red frame.", "Another red frame."]]) == ["Red frames throughout."]
    assert len(server.requests) == 3
    caption_request = server.requests[0]["body"]
    assert caption_request["response_format"]["json_schema"]["name"] == "CaptionOut"
    assert "look at this" in caption_request["messages"][0]["content"][-1]["text"]
    assert "summary: String should have at least 1 character" in server.requests[2]["body"]["messages"][0]["content"]
    usage = models.meter.by_role()
    assert usage["vlm"].calls == 1 and usage["llm"].calls == 2 and usage["llm"].prompt_tokens == 12 + 30


def test_one_failed_request_keeps_the_finished_replies_of_its_batch(server: FakeServer) -> None:
    server.script = [
        Reply(body=completion("first")),
        Reply(400, {"error": {"message": "image too large"}}),
        Reply(body=completion("third", completion_tokens=9)),
    ]
    meter = UsageMeter()
    engine = OpenAICompatEngine(role(server.url, concurrency=1), "vlm", meter)
    first, lost, third = engine.generate([LMRequest(f"prompt {i}") for i in range(3)])
    assert (first.text, first.error, third.text, third.error) == ("first", None, "third", None)
    assert lost.text == "" and "HTTP 400: image too large" in lost.error
    assert first.finish_reason == "stop"
    assert meter.by_role()["vlm"].completion_tokens == 3 + 9 and meter.by_role()["vlm"].calls == 3


def test_usage_seconds_share_the_wall_time_of_concurrent_requests(server: FakeServer) -> None:
    server.script = [Reply(body=completion(f"reply {i}"), delay=0.4) for i in range(4)]
    meter = UsageMeter()
    engine = OpenAICompatEngine(role(server.url, concurrency=4), "llm", meter)
    started = time.perf_counter()
    generations = engine.generate([LMRequest(f"prompt {i}") for i in range(4)])
    wall = time.perf_counter() - started
    total = meter.by_role()["llm"].seconds
    assert server.peak == 4
    assert 0.4 <= total <= wall + 1e-6, "the busy wall time, not the sum of four overlapping latencies"
    assert sum(g.usage.seconds for g in generations) == pytest.approx(total)


def test_a_stage_keeps_concurrency_requests_in_flight_across_its_batches(server: FakeServer, tmp_path) -> None:
    from kill_stage import ScriptedModels
    from memory_stores import hand_store

    from videomem.config import PipelineConfig
    from videomem.core import VideoSource
    from videomem.models.prompted import PromptedVision
    from videomem.pipeline.base import StageContext
    from videomem.pipeline.caption import CaptionStage

    server.script = [Reply(body=completion(), delay=0.3) for _ in range(8)]
    store = hand_store(tmp_path, [None] * 8)
    vision = PromptedVision(OpenAICompatEngine(role(server.url, concurrency=4), "vlm", UsageMeter()), role(server.url))
    ctx = StageContext(
        store, PipelineConfig(caption_batch_size=2), lambda: ScriptedModels(vision=vision), show_progress=False,
        stages=("caption",),
    )
    result = CaptionStage().run(ctx, [VideoSource(tmp_path / "v.mp4", "v")])
    assert (result.done, result.failures) == (8, [])
    assert server.peak == 4, "batches of 2, yet 4 requests in flight: the profile's concurrency"
    assert store.query("SELECT COUNT(*) FROM events")[0][0] == 8
