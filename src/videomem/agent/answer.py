"""What a question gets back: the answer, the evidence it rests on, and how it was found."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from videomem.evidence import Evidence

EXCERPT = 120
"""Characters of each evidence text shown in the human-readable form."""


@dataclass
class Answer:
    text: str
    choice: str | None
    """Option letter (A-H, `core.LETTERS`) for a multiple-choice question; None when open or unresolved."""
    evidence: list[Evidence]
    trace: list[dict[str, Any]] = field(default_factory=list)
    """One entry per step: step, thought, tool, arguments, observation, evidence, tokens, seconds."""
    tokens: int = 0
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        """The stable machine-readable form (`--json`, results.jsonl)."""
        return {
            "answer": self.text,
            "choice": self.choice,
            "evidence": [e.to_json() for e in self.evidence],
            "trace": self.trace,
            "tokens": self.tokens,
            "seconds": round(self.seconds, 3),
        }

    def render(self, time_text: Callable[[float], str]) -> str:
        """Human-readable form (CLI, chat, demo): answer, evidence time ranges, trace summary."""
        lines = [f"Answer: {self.text}", "Evidence:"]
        for e in self.evidence:
            text = " ".join(e.text.split())
            text = text if len(text) <= EXCERPT else text[: EXCERPT - 3] + "..."
            lines.append(f"  {e.video_id} {time_text(e.t_start)}-{time_text(e.t_end)} ({e.source}) {text}")
        if not self.evidence:
            lines.append("  (none)")
        lines.append("Trace:")
        for step in self.trace:
            arguments = json.dumps(step.get("arguments", {}), ensure_ascii=False)
            mark = " [malformed]" if step.get("error") else " [forced]" if step.get("forced") else ""
            lines.append(
                f"  {step['step']}. {step['tool']} {arguments}{mark} ({step['seconds']:.2f} s, {step['tokens']} tokens)"
            )
        lines.append(f"Total: {self.tokens} tokens, {self.seconds:.2f} s")
        return "\n".join(lines)
