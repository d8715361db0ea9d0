"""Usage accounting: every generation and embedding records its tokens and seconds in a
`UsageMeter`, so a run can report totals per role and a question its own cost."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    calls: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.seconds + other.seconds,
            self.calls + other.calls,
        )

    def __sub__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens - other.prompt_tokens,
            self.completion_tokens - other.completion_tokens,
            self.seconds - other.seconds,
            self.calls - other.calls,
        )

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class UsageMeter:
    """Thread-safe running totals per role ("vlm", "llm", "text_embedder", ...), and per thread
    (`this_thread`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_role: dict[str, Usage] = {}
        self._by_thread: dict[int, Usage] = {}

    def add(self, role: str, usage: Usage) -> None:
        with self._lock:
            self._by_role[role] = self._by_role.get(role, Usage()) + usage
            thread = threading.get_ident()
            self._by_thread[thread] = self._by_thread.get(thread, Usage()) + usage

    def this_thread(self) -> Usage:
        """What the calling thread has recorded, over all roles: a question is answered on one
        thread, so the difference of two readings is its own cost, not that of the questions
        answered beside it (`eval --jobs`, the server's readers) on the same models."""
        with self._lock:
            return self._by_thread.get(threading.get_ident(), Usage())

    def by_role(self) -> dict[str, Usage]:
        with self._lock:
            return dict(self._by_role)

    def total(self) -> Usage:
        total = Usage()
        for usage in self.by_role().values():
            total = total + usage
        return total


class WallShare:
    """Usage seconds, counted the same way by every backend: the wall time a request is in
    flight, shared equally among the requests in flight with it. A batch of n that runs for t
    seconds gives each t / n; the seconds of a run add up to the time the model was busy, however
    the requests overlapped (concurrent HTTP requests are not summed)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tokens = itertools.count()
        self._open: dict[int, float] = {}
        self._last = time.perf_counter()

    def _advance(self) -> None:
        now = time.perf_counter()
        if self._open:
            share = (now - self._last) / len(self._open)
            for token in self._open:
                self._open[token] += share
        self._last = now

    def start(self, n: int = 1) -> list[int]:
        """Open n requests; returns their tokens for `stop`."""
        with self._lock:
            self._advance()
            tokens = [next(self._tokens) for _ in range(n)]
            self._open.update((token, 0.0) for token in tokens)
            return tokens

    def stop(self, tokens: Sequence[int]) -> list[float]:
        """Close these requests; returns the seconds each was charged."""
        with self._lock:
            self._advance()
            return [self._open.pop(token) for token in tokens]
