"""`videomem` command line.

User errors (`VideomemError`) print one line, `error: ...`, and exit 2; no traceback.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console

from videomem.config import STAGE_ORDER, load_pipeline
from videomem.errors import VideomemError
from videomem.timeline import format_clock

app = typer.Typer(
    help="Turn long videos into a multimodal memory and ask questions of it.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
out = Console()
err = Console(stderr=True)

StoreOpt = Annotated[Path, typer.Option("--store", "-s", help="Store directory (one per corpus).")]
ModelsOpt = Annotated[
    Optional[Path],
    typer.Option("--models", help="Models profile (models/*.yaml). Default: models/offline.yaml, CPU, no network."),
]


def _models_factory(path: Path | None):
    def build():
        from videomem.models.registry import ModelSet

        return ModelSet.from_file(path)

    return build


@app.command()
def ingest(
    paths: Annotated[list[Path], typer.Argument(help="Video files or directories (searched recursively).")],
    store: StoreOpt,
    pipeline: Annotated[
        Optional[Path], typer.Option("--pipeline", help="Pipeline profile. Default: pipelines/default.yaml.")
    ] = None,
    models: ModelsOpt = None,
    timeline: Annotated[
        str, typer.Option("--timeline", help="'single': each video starts at 0. 'egolife': DAYn_..._HHMMSSFF names on a week.")
    ] = "single",
    stages: Annotated[
        Optional[str], typer.Option("--stages", help=f"Comma-separated subset of: {','.join(STAGE_ORDER)}.")
    ] = None,
    workers: Annotated[int, typer.Option("--workers", min=1, help="Decode processes.")] = 1,
    force: Annotated[bool, typer.Option("--force", help="Redo stages already done.")] = False,
) -> None:
    """Build (or resume) a store: sample clips and frames, then caption and extract objects."""
    from videomem.pipeline.runner import ingest as run_ingest
    from videomem.store import Store

    if timeline not in ("single", "egolife"):
        raise VideomemError(f"--timeline: {timeline!r} is not one of: single, egolife")
    cfg = load_pipeline(pipeline)
    chosen = [s.strip() for s in stages.split(",") if s.strip()] if stages else None
    with Store(store, create=True) as db:
        report = run_ingest(
            paths, db, cfg, _models_factory(models), stages=chosen, timeline=timeline, workers=workers, force=force
        )
    for result in report.results:
        out.print(f"{result.stage}: {result.done} done, {result.skipped} already done, {len(result.failures)} failed")
    failures = report.all_failures()
    if failures:
        err.print(f"[red]{len(failures)} failure(s):[/red]")
        for what, why in failures:
            err.print(f"  {what}: {why}", markup=False, highlight=False)
        raise typer.Exit(1)


@app.command()
def info(store: StoreOpt) -> None:
    """Summarise a store: videos, clips, hours of video, stages done."""
    from videomem.store import Store

    with Store(store) as db:
        videos = db.query("SELECT id, duration FROM videos ORDER BY id")
        n_clips = db.query("SELECT COUNT(*) AS n FROM clips")[0]["n"]
        hours = sum(v["duration"] for v in videos) / 3600
        out.print(f"videos: {len(videos)}")
        out.print(f"clips: {n_clips}", highlight=False)
        out.print(f"hours: {hours:.2f}")
        for stage, n in sorted(db.stage_counts().items()):
            out.print(f"stage {stage}: {n} units done", highlight=False)
        for v in videos:
            out.print(f"  {v['id']}  {format_clock(v['duration'])}", highlight=False)


def main() -> None:
    try:
        app()
    except VideomemError as exc:
        err.print(f"error: {exc}", markup=False, highlight=False)
        sys.exit(2)


if __name__ == "__main__":
    main()
