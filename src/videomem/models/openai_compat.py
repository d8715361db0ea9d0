"""The `openai` backend: any OpenAI-compatible server (`vllm serve`, SGLang, Ollama, OpenAI).

Requests of a batch run concurrently, because a serving engine batches whatever arrives
together; `batching` tells a stage to keep several batches in flight, so that `cfg.concurrency`
requests are really outstanding across a stage's batches (one HTTP connection pool, capped at
`concurrency`, carries them all). Transient failures (429, 5xx, dropped connections, timeouts)
are retried with exponential backoff (2, 4, 8 ... s) or as long as the server's `Retry-After`
asks, within one overall deadline per request (`deadline_s`: no attempt starts after it, and the
last one's timeout ends at it); anything left becomes one `ModelError` line that names the
server URL and the role, so a wrong `base_url`, a server that is not up yet or one that never
replies reads as such, in minutes. A request that fails for good does not discard the finished
replies of its batch: it comes back with its error (`Generation.error`), unless all of the
batch failed, which raises.

The token budget goes out as `max_completion_tokens` (reasoning models refuse `max_tokens`;
vLLM, SGLang and OpenAI accept it). `temperature` goes out only when the profile sets it:
reasoning models reject any but their default.

With `structured_output` the JSON schema also goes out as `response_format`; it is left out of
the prompt only where the server is known to enforce it (`schema_enforcement`: vLLM and SGLang,
by the `owned_by` of their `GET /models`, constrain every schema; OpenAI's API the strict ones).
Other servers may ignore `response_format` (`transformers serve` does), and a model that never
saw the schema cannot follow it; for such a server `structured_output: false` sends the prompt
alone.

`options.extra_body` is merged into every chat request, for server-specific fields (for example
vLLM's `chat_template_kwargs: {enable_thinking: false}` for Qwen3 thinking models).
"""

from __future__ import annotations

import base64
import email.utils
import io
import math
import os
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import cached_property
from typing import Any, Literal
from urllib.parse import urlparse

import httpx
import numpy as np
from PIL.Image import Image
from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    stop_before_delay,
    wait_exponential,
)

from videomem.config import RoleConfig
from videomem.errors import ModelError
from videomem.models.engines import Batching, Generation, LMRequest, VLRequest
from videomem.models.usage import Usage, UsageMeter, WallShare
from videomem.models.templates import with_schema

RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
ENFORCING_OWNERS = frozenset({"vllm", "sglang"})
"""`owned_by` of the models of servers that constrain decoding to any `response_format` schema."""
ENFORCING_HOSTS = frozenset({"api.openai.com"})
"""Hosts that enforce strict schemas (a non-strict one is best effort)."""
STRICT_UNSUPPORTED = ("default", "minLength", "maxLength")
"""Keywords OpenAI's strict mode rejects; pydantic still enforces them after parsing."""


def image_data_url(image: Image, quality: int = 90) -> str:
    """A frame as a base64 JPEG data URL, the form every OpenAI-compatible server accepts."""
    buffer = io.BytesIO()
    image.convert("RGB").save(buffer, format="JPEG", quality=quality)
    return "data:image/jpeg;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


class _OpenObject(Exception):
    """An object schema that accepts arbitrary keys, which strict mode cannot express."""


def strict_schema(schema: dict[str, Any]) -> dict[str, Any] | None:
    """The schema in OpenAI strict form (every object closed, every property required), or None
    when it holds a free-form object (such as tool arguments)."""

    def close(node: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in STRICT_UNSUPPORTED:
                continue
            if key in ("properties", "$defs"):
                value = {name: close(sub) for name, sub in value.items()}
            elif key in ("anyOf", "allOf", "oneOf"):
                value = [close(sub) for sub in value]
            elif key == "items" and isinstance(value, dict):
                value = close(value)
            elif key == "additionalProperties" and value is not False:
                raise _OpenObject
            out[key] = value
        if node.get("type") == "object":
            if "properties" not in node:
                raise _OpenObject
            out["additionalProperties"] = False
            out["required"] = list(node["properties"])
        return out

    try:
        return close(schema)
    except _OpenObject:
        return None


RETRY_AFTER_STATUS = frozenset({429, 503})
"""Statuses whose `Retry-After` header says how long to wait before the next attempt."""
BACKOFF = wait_exponential(multiplier=2, max=60)
"""Waits between attempts when the server names none: 2, 4, 8 ... s, at most a minute."""


def retry_after(response: httpx.Response) -> float | None:
    """Seconds a 429/503 reply asks the client to wait (`Retry-After`: seconds or an HTTP date)."""
    value = response.headers.get("retry-after")
    if response.status_code not in RETRY_AFTER_STATUS or not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _wait(state: RetryCallState) -> float:
    """The server's Retry-After when it gave one (never less than the backoff), else the backoff."""
    backoff = BACKOFF(state)
    err = state.outcome.exception() if state.outcome is not None else None
    if isinstance(err, httpx.HTTPStatusError):
        asked = retry_after(err.response)
        if asked is not None:
            return max(asked, backoff)
    return backoff


def _retryable(err: BaseException) -> bool:
    if isinstance(err, httpx.HTTPStatusError):
        return err.response.status_code in RETRY_STATUS
    return isinstance(err, httpx.TransportError)


class _Client:
    """POST JSON to one server with retries, and turn every failure into one ModelError line."""

    def __init__(self, cfg: RoleConfig, role: str) -> None:
        self.cfg = cfg
        self.role = role
        headers = {}
        if cfg.api_key_env:
            key = os.environ.get(cfg.api_key_env)
            if not key:
                raise ModelError(f"{role}: environment variable {cfg.api_key_env} (api_key_env) is not set")
            headers["Authorization"] = f"Bearer {key}"
        self.base_url = str(cfg.base_url).rstrip("/")
        limits = httpx.Limits(max_connections=cfg.concurrency, max_keepalive_connections=cfg.concurrency)
        self.http = httpx.Client(headers=headers, timeout=cfg.timeout_s, limits=limits)
        self.sleep = time.sleep
        """How retries wait (tests record the waits instead of sleeping)."""

    def get(self, path: str) -> dict[str, Any]:
        """One GET (no retries: a probe), as JSON; any failure is one ModelError line."""
        url = f"{self.base_url}{path}"
        try:
            response = self.http.get(url, timeout=min(self.cfg.timeout_s, 10.0))
            response.raise_for_status()
            return response.json()
        except (httpx.TransportError, httpx.HTTPStatusError, ValueError) as err:
            reason = _failure(err)
        raise ModelError(f"{self.role} at {url}: {reason}")

    def served_models(self) -> list[dict[str, Any]]:
        """The server's `GET /models` entries (id, owned_by, ...)."""
        data = self.get("/models").get("data")
        return [m for m in data if isinstance(m, dict)] if isinstance(data, list) else []

    def post(self, path: str, payload: dict[str, Any], files: dict[str, Any] | None = None) -> dict[str, Any]:
        """`payload` as JSON, or with `files` as a multipart form (audio uploads)."""
        url = f"{self.base_url}{path}"
        deadline = time.monotonic() + self.cfg.deadline_s
        retrying = Retrying(
            stop=stop_after_attempt(self.cfg.max_retries + 1) | stop_before_delay(self.cfg.deadline_s),
            wait=_wait,
            retry=retry_if_exception(_retryable),
            reraise=True,
            sleep=lambda seconds: self.sleep(seconds),
        )
        attempts = 0
        try:
            for attempt in retrying:
                with attempt:
                    attempts += 1
                    timeout = max(0.001, min(self.cfg.timeout_s, deadline - time.monotonic()))
                    if files is None:
                        response = self.http.post(url, json=payload, timeout=timeout)
                    else:
                        response = self.http.post(url, data=payload, files=files, timeout=timeout)
                    response.raise_for_status()
            return response.json()
        except httpx.TimeoutException:
            cut_short = attempts <= self.cfg.max_retries  # retries were left: the deadline stopped them
            reason = (
                f"no answer by the request deadline ({self.cfg.deadline_s:g} s, deadline_s)"
                if cut_short or time.monotonic() >= deadline - 0.05
                else f"no answer within {self.cfg.timeout_s:g} s"
            )
        except (httpx.TransportError, httpx.HTTPStatusError, ValueError) as err:
            reason = _failure(err)
        tries = f" after {attempts} attempts" if attempts > 1 else ""
        who = f"{self.role} ({self.cfg.backend} backend, model {self.cfg.model!r})"
        raise ModelError(" ".join(f"{who} at {url}: {reason}{tries}".split())) from None


def _failure(err: Exception) -> str:
    """One line for a request that failed on the way (connection), at the server (status) or in
    its reply (not JSON)."""
    if isinstance(err, httpx.TransportError):
        return f"cannot connect ({type(err).__name__}: {err or 'no detail'})"
    if isinstance(err, httpx.HTTPStatusError):
        return f"HTTP {err.response.status_code}: {_error_detail(err.response)}"
    return f"reply is not JSON ({err})"


def _error_detail(response: httpx.Response, limit: int = 200) -> str:
    try:
        body = response.json()
        detail = body.get("error", body.get("detail", body)) if isinstance(body, dict) else body
        if isinstance(detail, dict):  # OpenAI: {"error": {"message": ...}}
            detail = detail.get("message", detail)
        if isinstance(detail, list):  # FastAPI validation: {"detail": [{"loc": ..., "msg": ...}]}
            detail = "; ".join(str(d.get("msg", d)) if isinstance(d, dict) else str(d) for d in detail)
        text = str(detail)
    except ValueError:
        text = response.text
    text = " ".join(text.split()) or response.reason_phrase
    return text if len(text) <= limit else text[: limit - 3] + "..."


def schema_enforcement(client: _Client) -> Literal["all", "strict", "none"]:
    """Which `response_format` schemas the server is known to enforce: all (vLLM, SGLang), the
    strict ones (OpenAI's API), or none known (the schema must stay in the prompt)."""
    if urlparse(client.base_url).hostname in ENFORCING_HOSTS:
        return "strict"
    try:
        owners = {str(m.get("owned_by", "")).lower() for m in client.served_models()}
    except ModelError:
        return "none"
    return "all" if owners and owners <= ENFORCING_OWNERS else "none"


class OpenAICompatEngine:
    """Chat completions; serves as both VisionLanguageModel and LanguageModel."""

    def __init__(self, cfg: RoleConfig, role: str, meter: UsageMeter) -> None:
        self.cfg = cfg
        self.role = role
        self.meter = meter
        self.client = _Client(cfg, role)
        self.clock = WallShare()
        self.http_pool = ThreadPoolExecutor(cfg.concurrency, thread_name_prefix=f"{role}-http")

    def batching(self, batch_size: int) -> Batching:
        """Enough batches in flight to keep `concurrency` requests outstanding."""
        return Batching(batch_size, max(1, math.ceil(self.cfg.concurrency / batch_size)))

    @cached_property
    def enforcement(self) -> Literal["all", "strict", "none"]:
        """`schema_enforcement` of this server, asked once (only with `structured_output`)."""
        return schema_enforcement(self.client) if self.cfg.structured_output else "none"

    def payload(self, request: VLRequest | LMRequest) -> dict[str, Any]:
        """The exact chat-completions body sent for one request."""
        strict = strict_schema(request.json_schema) if request.json_schema is not None else None
        enforced = self.enforcement == "all" or self.enforcement == "strict" and strict is not None
        prompt = request.prompt if enforced else with_schema(request.prompt, request.json_schema)
        images = getattr(request, "images", None) or []
        if images:
            content: str | list[dict[str, Any]] = [
                *({"type": "image_url", "image_url": {"url": image_data_url(image)}} for image in images),
                {"type": "text", "text": prompt},
            ]
        else:
            content = prompt
        messages = [{"role": "system", "content": request.system}] if request.system else []
        messages.append({"role": "user", "content": content})
        body: dict[str, Any] = {
            "model": self.cfg.model,
            "messages": messages,
            "max_completion_tokens": request.max_tokens or self.cfg.max_tokens,
        }
        if self.cfg.temperature is not None:
            body["temperature"] = self.cfg.temperature
        if request.json_schema is not None and self.cfg.structured_output:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {
                    "name": str(request.json_schema.get("title", "output")),
                    "schema": strict if strict is not None else request.json_schema,
                    "strict": strict is not None,
                },
            }
        return body | self.cfg.options.get("extra_body", {})

    def _one(self, request: VLRequest | LMRequest) -> Generation:
        """One request; a failure after its retries comes back as `Generation.error`."""
        [token] = self.clock.start()
        try:
            reply = self.client.post("/chat/completions", self.payload(request))
            try:
                choice = reply["choices"][0]
                text = choice["message"]["content"] or ""
            except (KeyError, IndexError, TypeError):
                raise ModelError(
                    f"{self.role} at {self.client.base_url}: reply has no choices[0].message.content"
                ) from None
        except ModelError as err:
            [seconds] = self.clock.stop([token])
            self.meter.add(self.role, Usage(seconds=seconds, calls=1))
            return Generation(text="", usage=Usage(seconds=seconds, calls=1), error=str(err))
        [seconds] = self.clock.stop([token])
        tokens = reply.get("usage") or {}
        usage = Usage(
            prompt_tokens=int(tokens.get("prompt_tokens") or 0),
            completion_tokens=int(tokens.get("completion_tokens") or 0),
            seconds=seconds,
            calls=1,
        )
        self.meter.add(self.role, usage)
        return Generation(text=text, usage=usage, finish_reason=choice.get("finish_reason"))

    def generate(self, requests: Sequence[VLRequest | LMRequest]) -> list[Generation]:
        """Every request's generation, in order; raises only when all of them failed."""
        generations = list(self.http_pool.map(self._one, requests))
        failed = [g for g in generations if g.error is not None]
        if failed and len(failed) == len(generations):
            raise ModelError(failed[0].error)
        return generations


class OpenAICompatEmbedder:
    """TextEmbedder over POST /embeddings; rows come back L2-normalised float32."""

    def __init__(self, cfg: RoleConfig, role: str, meter: UsageMeter) -> None:
        self.cfg = cfg
        self.role = role
        self.meter = meter
        self.client = _Client(cfg, role)
        self._dim: int | None = int(cfg.options["dim"]) if "dim" in cfg.options else None
        if self._dim is None:
            self.embed(["dimension probe"])
        self.dim: int = self._dim


    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        rows: list[np.ndarray] = []
        for start in range(0, len(texts), self.cfg.batch_size):
            batch = list(texts[start : start + self.cfg.batch_size])
            started = time.perf_counter()
            reply = self.client.post("/embeddings", {"model": self.cfg.model, "input": batch})
            data = sorted(reply.get("data", []), key=lambda item: item["index"])
            if len(data) != len(batch):
                raise ModelError(
                    f"{self.role} at {self.client.base_url}: asked for {len(batch)} embeddings, got {len(data)}"
                )
            rows.extend(np.asarray(item["embedding"], dtype=np.float32) for item in data)
            tokens = reply.get("usage") or {}
            prompt_tokens = int(tokens.get("prompt_tokens") or 0)
            self.meter.add(self.role, Usage(prompt_tokens, 0, time.perf_counter() - started, 1))
        matrix = np.stack(rows)
        if self._dim is not None and matrix.shape[1] != self._dim:
            raise ModelError(
                f"{self.role}: server returned {matrix.shape[1]}-d embeddings, the profile says dim {self._dim}"
            )
        self._dim = matrix.shape[1]
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        return (matrix / np.maximum(norms, 1e-12)).astype(np.float32)
