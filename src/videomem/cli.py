"""`videomem` command line.

User errors (`VideomemError`) print one line, `error: ...`, and exit 2; no traceback. Every
command but `ingest` only reads its store, and opens it read-only.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console

from videomem.config import SERVE_PORT, PipelineConfig, load_pipeline, stage_names
from videomem.core import tune_process
from videomem.errors import VideomemError
from videomem.timeline import format_clock

DEFAULT_WORKERS = min(os.cpu_count() or 1, 8)
REPLY_SHOWN = 200
"""Characters of a failed unit's raw model reply that `info` prints (the store keeps all of it)."""

app = typer.Typer(
    help="Turn long videos into a multimodal memory and ask questions of it.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
out = Console()
err = Console(stderr=True, soft_wrap=True)  # an error is one line, however narrow the terminal

StoreOpt = Annotated[Path, typer.Option("--store", "-s", help="Store directory (one per corpus).")]
ModelsOpt = Annotated[
    Optional[Path],
    typer.Option("--models", help="Models profile: a YAML file or a shipped name (`videomem profiles`). Default: offline (CPU, no network)."),
]


def _models_factory(path: Path | None):
    def build():
        from videomem.models.registry import ModelSet

        return ModelSet.from_file(path)

    return build


@app.command()
def ingest(
    store: StoreOpt,
    paths: Annotated[
        Optional[list[Path]],
        typer.Argument(help="Video files or directories (searched recursively). None: memory from --captions alone."),
    ] = None,
    pipeline: Annotated[
        Optional[Path], typer.Option("--pipeline", help="Pipeline profile: a YAML file or a shipped name. Default: default.")
    ] = None,
    models: ModelsOpt = None,
    timeline: Annotated[
        str, typer.Option("--timeline", help="'single': each video starts at 0. 'egolife': DAYn_..._HHMMSSFF names on a week.")
    ] = "single",
    stages: Annotated[
        Optional[str], typer.Option("--stages", help=f"Comma-separated subset of: {','.join(stage_names())}.")
    ] = None,
    workers: Annotated[
        int, typer.Option("--workers", min=1, help="Decode processes; long videos are split between them.")
    ] = DEFAULT_WORKERS,
    force: Annotated[bool, typer.Option("--force", help="Redo stages already done.")] = False,
    captions: Annotated[
        Optional[Path],
        typer.Option(
            "--captions",
            help="EgoLifeCap DenseCaption folder of one person: imported as clip captions (no VLM pass). "
            "With no video paths, the memory is built from the captions (and --transcripts) alone, with no frames.",
        ),
    ] = None,
    transcripts: Annotated[
        Optional[Path], typer.Option("--transcripts", help="EgoLifeCap Transcript folder of one person: imported as clip speech.")
    ] = None,
    ray: Annotated[
        bool,
        typer.Option("--ray", help="Decode, caption and embed clips on Ray (a local one unless --ray-address); --workers decode tasks."),
    ] = False,
    ray_address: Annotated[
        Optional[str], typer.Option("--ray-address", help="Join this Ray cluster ('auto', host:port, ray://host:port); implies --ray.")
    ] = None,
    ray_actors: Annotated[
        Optional[int],
        typer.Option("--ray-actors", min=1, help="Actors per model pool with --ray. Default: the pipeline's ray_vision_actors/ray_embed_actors."),
    ] = None,
) -> None:
    """Build (or resume) a store: sample clips and frames, caption them, extract objects, build
    episodic memory, embed visual segments. With --captions and no video paths, from the
    captions (and --transcripts) alone: clips with no frames."""
    from videomem.pipeline.ray_runner import RayOptions, connect
    from videomem.pipeline.runner import check_request, discover_sources
    from videomem.pipeline.runner import ingest as run_ingest
    from videomem.store import Store

    if timeline not in ("single", "egolife"):
        raise VideomemError(f"--timeline: {timeline!r} is not one of: single, egolife")
    if ray_actors is not None and not (ray or ray_address):
        raise VideomemError("--ray-actors: sizes the actor pools of a Ray ingest; add --ray")
    if not paths and captions is None:  # refused before a store is made
        raise VideomemError("no video files given: pass videos, or --captions (with --transcripts) to build the memory "
                            "from the captions alone")
    cfg = load_pipeline(pipeline)
    chosen = [s.strip() for s in stages.split(",") if s.strip()] if stages else None
    checked = check_request(cfg, chosen, captions, transcripts, timeline)  # a refused ingest leaves no empty store behind
    sources, missing = discover_sources(paths or [], timeline)
    if paths and not sources:  # nothing to ingest: leave no empty store behind
        _print_failures(missing)
        raise typer.Exit(1)
    cluster = RayOptions(ray_address, ray_actors) if ray or ray_address else None
    _preflight(models, cfg, ray=cluster is not None)
    if cluster is not None:  # a cluster that cannot be joined leaves no empty store behind either
        connect(cluster)
    with Store(store, create=True) as db:
        report = run_ingest(
            paths or [], db, cfg, _models_factory(models), stages=chosen, timeline=timeline, workers=workers, force=force,
            captions=captions, transcripts=transcripts,
            ray=cluster, checked=checked,
        )
    for result in report.results:
        restored = f", {result.repaired} file(s) restored" if result.repaired else ""
        note = f" ({result.note})" if result.note else ""
        out.print(
            f"{result.stage}: {result.done} done, {result.skipped} already done, {len(result.failures)} failed{restored}{note}",
            soft_wrap=True,
        )
    for role, usage in sorted(report.usage.items()):
        out.print(
            f"{role}: {usage.calls} calls, {usage.prompt_tokens} prompt + {usage.completion_tokens} completion tokens,"
            f" {usage.seconds:.1f} s",
            highlight=False,
        )
    failures = report.all_failures()
    if failures:
        _print_failures(failures)
        raise typer.Exit(1)


def _preflight(
    models: Path | None,
    pipeline: PipelineConfig | None = None,
    agents: Sequence[Path | None] = (),
    *,
    store: Path | None = None,
    port: int | None = None,
    ray: bool = False,
) -> None:
    """`videomem doctor`'s checks that cost nothing, for each agent profile given (None: the
    default one); the first failure stops the command."""
    from videomem.config import load_agent, load_models
    from videomem.doctor import preflight

    profile = load_models(models)
    for agent in agents:
        preflight(profile, pipeline, load_agent(agent), store=store, port=port, ray=ray)
    if not agents:
        preflight(profile, pipeline, store=store, port=port, ray=ray)


def _print_failures(failures: list[tuple[str, str]]) -> None:
    err.print(f"[red]{len(failures)} failure(s):[/red]")
    for what, why in failures:
        err.print(f"  {what}: {why}", markup=False, highlight=False)


@app.command()
def info(store: StoreOpt, models: ModelsOpt = None) -> None:
    """Summarise a store: videos, clips, hours of video, stages done, and each memory's size."""
    from videomem.models.registry import ModelSet
    from videomem.server.summary import summarize
    from videomem.store import Store

    with Store(store, read_only=True) as db:
        summary = summarize(db, ModelSet.from_file(models))  # roles load lazily: counting rows loads no model
    out.print(f"videos: {len(summary.videos)}")
    out.print(f"clips: {summary.clips}", highlight=False)
    out.print(f"hours: {summary.hours:.2f}")
    by_source = ", ".join(f"{source} {n}" for source, n in summary.transcripts.items())
    out.print(f"transcripts: {sum(summary.transcripts.values())}" + (f" ({by_source})" if by_source else ""), highlight=False)
    if summary.transcript_clips:
        coverage = ", ".join(f"{source} {n}/{summary.clips}" for source, n in summary.transcript_clips.items())
        out.print(f"clips with speech: {coverage}", highlight=False)
    for stage, n in summary.stages.items():
        out.print(f"stage {stage}: {n} units done", highlight=False)
    for row in summary.failures:
        reply = " ".join(row["reply"].split())
        out.print(
            f"failed {row['stage']} {row['unit']} ({row['attempts']} run(s); re-run ingest to retry): {row['error']}"
            + (f"; reply: {reply[:REPLY_SHOWN]}{'...' if len(reply) > REPLY_SHOWN else ''}" if reply else ""),
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
    for name, stats in summary.memories.items():
        sizes = ", ".join(f"{k} {v}" for k, v in stats.items())
        out.print(f"memory {name}: {sizes}", highlight=False)
    for v in summary.videos:
        out.print(f"  {v['id']}  {format_clock(v['duration'])}", highlight=False)


AgentOpt = Annotated[
    Optional[Path], typer.Option("--agent", help="Agent profile: a YAML file or a shipped name (`videomem profiles`). Default: telemem.")
]
UntilOpt = Annotated[
    Optional[str],
    typer.Option(
        "--until",
        help="Query time: only memory recorded by then is used, the recent ranked higher as the agent profile's "
        "recency_half_life_hours says (seconds, HH:MM:SS, 'DAY1 11:09:42').",
    ),
]
VideoOpt = Annotated[Optional[str], typer.Option("--video", help="Answer from this video only (file name without extension).")]


@app.command()
def ask(
    question: Annotated[str, typer.Argument(help="The question.")],
    store: StoreOpt,
    choices: Annotated[
        Optional[str], typer.Option("--choices", help="Multiple choice: comma-separated options, \"opt A,opt B,opt C,opt D\".")
    ] = None,
    until: UntilOpt = None,
    video: VideoOpt = None,
    agent: AgentOpt = None,
    models: ModelsOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print exactly one JSON object.")] = False,
) -> None:
    """Answer a question from a store's memory: the answer, its evidence time ranges and the trace."""
    import json

    from videomem.agent.react import Agent
    from videomem.config import load_agent
    from videomem.models.registry import ModelSet
    from videomem.store import Store
    from videomem.store.clips import timeline_kind
    from videomem.timeline import TimeText, parse_time

    options = [c.strip() for c in choices.split(",") if c.strip()] if choices is not None else None
    cutoff = parse_time(until) if until is not None else None
    cfg = load_agent(agent)
    with Store(store, read_only=True) as db:
        answer = Agent(db, ModelSet.from_file(models), cfg).ask(question, options, cutoff, video)
        if as_json:
            print(json.dumps(answer.to_json(), ensure_ascii=False))
        else:
            typer.echo(answer.render(TimeText(timeline_kind(db))))


@app.command()
def chat(
    store: StoreOpt,
    until: UntilOpt = None,
    video: VideoOpt = None,
    agent: AgentOpt = None,
    models: ModelsOpt = None,
) -> None:
    """Ask questions one per line (stdin) until end of input or 'exit'."""
    from videomem.agent.react import Agent
    from videomem.config import load_agent
    from videomem.models.registry import ModelSet
    from videomem.store import Store
    from videomem.store.clips import timeline_kind
    from videomem.timeline import TimeText, parse_time

    cutoff = parse_time(until) if until is not None else None
    cfg = load_agent(agent)
    with Store(store, read_only=True) as db:
        responder, time_text = Agent(db, ModelSet.from_file(models), cfg), TimeText(timeline_kind(db))
        interactive = sys.stdin.isatty()
        while True:
            if interactive:
                err.print("> ", end="")
            line = sys.stdin.readline()
            question = line.strip()
            if not line or question.lower() in ("exit", "quit"):
                break
            if not question:
                continue
            try:
                answer = responder.ask(question, None, cutoff, video)
            except VideomemError as exc:
                err.print(f"error: {exc}", markup=False, highlight=False)
                continue
            typer.echo(answer.render(time_text) + "\n")


def _memory_help() -> str:
    from videomem.memory.registry import MEMORIES

    return "Which memory: " + "; ".join(f"{name}: {entry.description}" for name, entry in MEMORIES.items())


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="What to look for: people, objects, actions, on-screen text.")],
    store: StoreOpt,
    memory: Annotated[str, typer.Option("--memory", "-m", help=_memory_help())] = "events",
    top_k: Annotated[int, typer.Option("--top-k", "-k", min=1, help="How many entries.")] = 5,
    until: UntilOpt = None,
    video: VideoOpt = None,
    models: ModelsOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON list of evidence objects.")] = False,
) -> None:
    """Search one memory directly and print what it returns (what the agent's tool would see)."""
    import json

    from videomem.memory.registry import open_memory
    from videomem.models.registry import ModelSet
    from videomem.store import Store
    from videomem.store.clips import require_video, timeline_kind
    from videomem.timeline import TimeText, parse_time

    cutoff = parse_time(until) if until is not None else None
    with Store(store, read_only=True) as db:
        require_video(db, video)
        found = open_memory(memory, db, ModelSet.from_file(models)).retrieve(query, top_k, cutoff, video)
        if as_json:
            print(json.dumps([{**e.to_json(), "memory": memory} for e in found], ensure_ascii=False))
            return
        time_text = TimeText(timeline_kind(db))
        if not found:
            typer.echo(f"nothing in {memory} memory" + (f" before {time_text(cutoff)}" if cutoff is not None else ""))
        for n, e in enumerate(found, start=1):
            scale = f" [{e.scale:g} s]" if e.scale is not None else ""
            typer.echo(f"{n}. {e.video_id} {time_text.span(e.t_start, e.t_end)}{scale} ({e.score:.3f}) {' '.join(e.text.split())}")
            if e.frames:
                typer.echo(f"   frames: {', '.join(e.frames)}")


@app.command()
def synth(
    outdir: Annotated[Path, typer.Argument(help="Directory for the videos, the question file and script.json.")],
    minutes: Annotated[
        Optional[float], typer.Option("--minutes", help="Length of the single video (default 30), or footage per day with --days.")
    ] = None,
    days: Annotated[Optional[int], typer.Option("--days", help="Make an EgoLife-style corpus of 30-s clips over N days (2-7).")] = None,
    seed: Annotated[int, typer.Option("--seed", help="Same seed, same benchmark.")] = 0,
    fmt: Annotated[
        Optional[str], typer.Option("--format", help="lvbench (one video) or egolife (days of clips). Default: egolife with --days.")
    ] = None,
    speech: Annotated[
        bool,
        typer.Option(
            "--speech",
            help="Give every video a sound track (needs Debian espeak-ng) with spoken lines whose content is never on "
            "screen (where an item is, a name, a number), and a need_audio question about each; speech.json says what "
            "was said when. Without it the corpus is exactly as before.",
        ),
    ] = False,
    writer: Annotated[
        str,
        typer.Option(
            "--writer",
            help="'second': also write questions by a second writer that shares no sentence form with the first "
            "(second/video_info.meta.jsonl, or second/EgoLifeQA_A1_JAKE.json with --days), a report beside the "
            "first writer's score.",
        ),
    ] = "first",
) -> None:
    """Generate a scripted benchmark: on-screen text events at known times and questions about them
    (--speech: spoken lines too)."""
    from videomem.synth import synth as make, write_second

    if writer not in ("first", "second"):
        raise VideomemError(f"--writer {writer!r}: choose first or second")
    corpus = make(outdir, minutes=minutes, days=days, seed=seed, fmt=fmt, speech=speech)
    if writer == "second":
        typer.echo(f"second writer's questions: {write_second(corpus.root, seed)}")
    typer.echo(f"{len(corpus.videos)} video(s), {len(corpus.events)} events, {len(corpus.questions)} questions")
    if corpus.speech:
        typer.echo(f"spoken lines: {len(corpus.speech)}, one need_audio question each ({corpus.root / 'speech.json'})")
    typer.echo(f"questions: {corpus.questions_file}")
    typer.echo(f"the same questions reworded by the same writer: {corpus.paraphrased_file}")
    typer.echo(
        f"next: videomem ingest {corpus.root / 'videos'} --store STORE --pipeline {corpus.pipeline} --timeline {corpus.timeline}"
    )
    typer.echo(f"then: videomem eval {corpus.format} --questions {corpus.questions_file} --store STORE")


@app.command()
def frame(
    store: StoreOpt,
    at: Annotated[str, typer.Option("--at", help="Corpus time: seconds, MM:SS, HH:MM:SS, 'DAY1 11:09:42' or HHMMSSFF.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Where to write the JPEG.")],
    video: Annotated[Optional[str], typer.Option("--video", help="Only frames of this video (file name without extension).")] = None,
) -> None:
    """Write the stored frame nearest a corpus time."""
    import shutil

    from videomem.store import Store
    from videomem.timeline import parse_time

    t = parse_time(at)
    with Store(store, read_only=True) as db:
        _check_covered(db, t, at, video)
        if video:
            sql, params = "SELECT video_id, t, path FROM frames WHERE video_id = ? ORDER BY abs(t - ?) LIMIT 1", (video, t)
        else:
            sql, params = "SELECT video_id, t, path FROM frames ORDER BY abs(t - ?) LIMIT 1", (t,)
        rows = db.query(sql, params)
        if not rows:
            scope = f"video {video!r}" if video else "this store"
            raise VideomemError(f"{store}: no frames stored for {scope} (run `videomem ingest ... --stages sample`)")
        row = rows[0]
        source = db.root / row["path"]
        if not source.is_file():
            raise VideomemError(f"{source}: frame file is missing from the store")
        output.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, output)
    out.print(f"{output}: {row['video_id']} at {format_clock(row['t'])} ({row['t']:.2f}s)", markup=False, highlight=False)


def _check_covered(db, t: float, at: str, video: str | None) -> None:
    """A time no video covers has no frame: the nearest one may be hours away, or another video's."""
    from videomem.store.clips import timeline_kind
    from videomem.timeline import TimeText

    scope, params = ("WHERE id = ?", (video,)) if video else ("", ())
    spans = [(r["t_offset"], r["t_offset"] + r["duration"]) for r in db.query(f"SELECT * FROM videos {scope}", params)]
    if not spans or any(start - 0.5 <= t <= end + 0.5 for start, end in spans):
        return
    covered = ", ".join(TimeText(timeline_kind(db)).span(a, b) for a, b in sorted(spans)[:5])
    more = f" and {len(spans) - 5} more" if len(spans) > 5 else ""
    whose = f"video {video!r}" if video else "any video in the store"
    raise VideomemError(f"--at {at}: not inside {whose} (covered: {covered}{more})")


@app.command(name="eval")
def eval_(
    benchmark: Annotated[str, typer.Argument(help="egolife, lvbench or videomme (long subset).")],
    questions: Annotated[
        Path, typer.Option("--questions", help="EgoLifeQA_*.json, LVBench video_info.meta.jsonl, or Video-MME rows (.parquet/.json/.jsonl).")
    ],
    store: StoreOpt,
    out_dir: Annotated[
        Optional[Path], typer.Option("--out", help="Output directory. Default: runs/<benchmark>-<agent name>.")
    ] = None,
    agent: Annotated[
        Optional[list[Path]],
        typer.Option(
            "--agent",
            help="Agent profile (file or shipped name). Default: telemem; baseline: caption-rag. Give several to "
            "compare them side by side (each runs into OUT/<agent name>, compare.md in OUT).",
        ),
    ] = None,
    models: ModelsOpt = None,
    jobs: Annotated[int, typer.Option("--jobs", min=1, help="Questions answered at once (threads).")] = 1,
    limit: Annotated[Optional[int], typer.Option("--limit", min=1, help="Only the first N questions.")] = None,
    retrieval: Annotated[
        bool,
        typer.Option(
            "--retrieval",
            help="Score each memory's retrieval (and caption RAG's) against the targets instead of answering: "
            "recall@k and tIoU@k per memory and scale, no answering model. Each is asked with the question "
            "and its options, as the agents search.",
        ),
    ] = False,
    question_only: Annotated[
        bool,
        typer.Option(
            "--question-only",
            help="With --retrieval: ask every memory and caption RAG with the question alone, without its options.",
        ),
    ] = False,
) -> None:
    """Answer a benchmark's questions from a store: results.jsonl, report.md, plots and the
    benchmark's own output files (resumable)."""
    from videomem.config import load_agent
    from videomem.eval.harness import run_eval, run_side_by_side

    _preflight(models, agents=agent or [None], store=store)
    if question_only and not retrieval:
        raise VideomemError("--question-only is a setting of --retrieval; an agent chooses its own queries")
    if retrieval:
        _eval_retrieval(benchmark, questions, store, out_dir, agent, models, limit, question_only)
        return
    if agent and len(agent) > 1:
        target = out_dir or Path("runs") / f"{benchmark}-compare"
        _, summaries = run_side_by_side(
            benchmark, questions, store, target, agent, models_path=models, jobs=jobs, limit=limit
        )
        for s in summaries:
            tiou = "n/a" if s.mean_tiou is None else f"{s.mean_tiou:.3f}"
            typer.echo(
                f"{s.name}: accuracy {100 * s.accuracy:.1f}% ({s.correct}/{s.n}), mean tIoU {tiou}, "
                f"{s.tokens:.0f} tokens and {s.seconds:.2f} s per question"
            )
        typer.echo(f"comparison: {target / 'compare.md'}")
        return
    chosen = agent[0] if agent else None
    target = out_dir or Path("runs") / f"{benchmark}-{load_agent(chosen).name}"
    result = run_eval(benchmark, questions, store, target, agent_path=chosen, models_path=models, jobs=jobs, limit=limit)
    s = result.summary
    typer.echo(f"accuracy {100 * s.accuracy:.1f}% ({s.correct}/{s.n})")
    for category, (correct, total) in s.categories.items():
        typer.echo(f"  {category}: {100 * correct / total:.1f}% ({correct}/{total})")
    tiou = "n/a" if s.mean_tiou is None else f"{s.mean_tiou:.3f}"
    typer.echo(f"mean tIoU {tiou}; {s.tokens:.0f} tokens and {s.seconds:.2f} s per question")
    if result.skipped:
        typer.echo(f"skipped {len(result.skipped)} question(s) whose video is not in the store", err=True)
    for line in result.not_compared:
        typer.echo(f"not compared with {line} (its value → this run's)", err=True)
    typer.echo(f"report: {result.out_dir / 'report.md'}")
    if s.n == 0:
        raise VideomemError(f"no question was answered ({len(result.skipped)} skipped): nothing was measured")


def _eval_retrieval(
    benchmark: str, questions: Path, store: Path, out_dir: Path | None, agent: list[Path] | None, models: Path | None,
    limit: int | None, question_only: bool,
) -> None:
    from videomem.eval.harness import load_questions
    from videomem.eval.retrieval import KS, run_retrieval

    if agent and len(agent) > 1:
        raise VideomemError("--retrieval: give one --agent (its memory settings are used), not several")
    asked = load_questions(benchmark, questions)[:limit]
    target = out_dir or Path("runs") / f"{benchmark}-retrieval"
    report = run_retrieval(
        asked, store, target, agent_path=agent[0] if agent else None, models_path=models, question_only=question_only
    )
    for row in report.rows:
        recall = ", ".join(f"R@{k} {row.recall[k]:.3f}" for k in KS)
        tiou = ", ".join(f"tIoU@{k} {100 * row.tiou[k]:.2f}%" for k in KS)
        typer.echo(f"{row.label}: {recall}; {tiou} ({row.questions} questions)")
    for name, why in report.not_measured.items():
        typer.echo(f"not measured: {name} ({why})", err=True)
    typer.echo(f"report: {target / 'report.md'}")
    if not report.asked:
        raise VideomemError("no question with a target could be asked: nothing was measured")


TokenOpt = Annotated[
    Optional[str],
    typer.Option(
        "--token", envvar="VIDEOMEM_TOKEN", help="API token every request must carry (or set VIDEOMEM_TOKEN)."
    ),
]


@app.command()
def serve(
    store: StoreOpt,
    host: Annotated[str, typer.Option("--host", help="Address to bind; the default serves this machine only.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="0 picks a free port.")] = SERVE_PORT,
    agent: AgentOpt = None,
    models: ModelsOpt = None,
    token: TokenOpt = None,
    threads: Annotated[int, typer.Option("--threads", min=1, help="Questions answered at once.")] = 8,
    ingest_roots: Annotated[
        Optional[list[Path]],
        typer.Option(
            "--ingest-root",
            metavar="DIR",
            exists=True,
            file_okay=False,
            resolve_path=True,
            help="Folder POST /ingest may read videos and pipeline profiles from (repeatable). None: remote ingest is off.",
        ),
    ] = None,
    allowed_hosts: Annotated[
        Optional[list[str]],
        typer.Option("--allowed-host", metavar="NAME", help="Host name clients may call the server by, besides the loopback names (repeatable)."),
    ] = None,
) -> None:
    """Serve a store over HTTP: the web page at /, the API (docs at /docs), videos and frames.
    Beyond this machine (--host other than loopback) only with a token."""
    import uvicorn

    from videomem.config import load_agent
    from videomem.models.registry import ModelSet
    from videomem.server.app import create_app
    from videomem.server.guards import check_bind, trusted_hosts

    check_bind(host, token)
    _preflight(models, agents=[agent], store=store, port=port)
    application = create_app(
        store, ModelSet.from_file(models), load_agent(agent), token=token, threads=threads,
        ingest_roots=ingest_roots or (), hosts=trusted_hosts(host, allowed_hosts or ()),
    )
    uvicorn.run(application, host=host, port=port)


@app.command()
def doctor(
    models: ModelsOpt = None,
    pipeline: Annotated[
        Optional[Path], typer.Option("--pipeline", help="Pipeline profile. Default: pipelines/default.yaml.")
    ] = None,
    agent: AgentOpt = None,
    store: Annotated[Optional[Path], typer.Option("--store", "-s", help="Also compare this store's embedders.")] = None,
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="The port serve will use.")] = SERVE_PORT,
) -> None:
    """Check, without loading weights, that this machine can run the profiles: packages and
    versions, CUDA and its libraries, GPU memory, image limits, servers, ports, store embedders.
    One row per check; each ✗ comes with the line that fixes it."""
    import importlib.util

    from videomem.config import load_agent, load_models
    from videomem.doctor import checks

    found = checks(
        load_models(models), load_pipeline(pipeline), load_agent(agent), store=store, port=port,
        ray=importlib.util.find_spec("ray") is not None,
    )
    for check in found:
        for line in check.lines():
            typer.echo(line)
    if any(check.ok is False for check in found):
        raise typer.Exit(1)


@app.command()
def mcp(
    store: StoreOpt,
    http: Annotated[bool, typer.Option("--http", help="Streamable HTTP at http://HOST:PORT/mcp instead of stdio.")] = False,
    host: Annotated[str, typer.Option("--host", help="Address to bind with --http.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=1, max=65535)] = 8001,
    agent: AgentOpt = None,
    models: ModelsOpt = None,
    token: TokenOpt = None,
) -> None:
    """Serve the agent's tools and `ask` over MCP (stdio by default) for MCP clients. Over HTTP
    beyond this machine (--host other than loopback) only with a token."""
    from videomem.config import load_agent
    from videomem.models.registry import ModelSet
    from videomem.server.guards import check_bind
    from videomem.server.mcp_server import serve_http, serve_stdio

    if http:
        check_bind(host, token)
        serve_http(store, ModelSet.from_file(models), load_agent(agent), host=host, port=port, token=token)
    else:
        serve_stdio(store, ModelSet.from_file(models), load_agent(agent))


@app.command()
def profiles() -> None:
    """List the profiles that ship with videomem, by kind: pass a name to --pipeline, --models or
    --agent, or copy the file it names and pass your own."""
    from videomem.config import DEFAULT_PROFILES, default_path, shipped_profiles

    for kind in ("pipelines", "models", "agents"):
        typer.echo(f"{kind}:")
        for name in shipped_profiles(kind):
            default = " (default)" if name == DEFAULT_PROFILES[kind] else ""
            typer.echo(f"  {name}{default}  {default_path(kind, name)}")


def main() -> None:
    tune_process()
    try:
        app()
    except VideomemError as exc:
        err.print(f"error: {exc}", markup=False, highlight=False)
        sys.exit(2)


if __name__ == "__main__":
    main()
