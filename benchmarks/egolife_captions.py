"""A person's EgoLife memory from the released captions alone: cost on this machine.

`videomem ingest --captions DenseCaption/<person> --transcripts Transcript/<person>` with no
video files, offline models, the egolife pipeline (every stage it lists; those that need the
footage skip), into a fresh store, in this process: one `ingest`, as the command runs it (one
set of models for every stage). Prints each step's wall time and result when the ingest ends,
then the wall time, the peak resident memory of this process and the commit measured.

    python benchmarks/egolife_captions.py [--data ../shared/data/egolife] [--person A1_JAKE] [--days 1,2] [--keep DIR]
                                          [--models PROFILE]

`--days` builds only those days (a quick look; the figure in docs/benchmarks.md is the week).
`--keep DIR` builds the store in DIR (a new folder) and keeps it, e.g. to evaluate on it.
`--models` takes a models profile (default: the offline one), e.g. to compare its settings.
Target for the week: at most 10 min wall on 2 CPU cores.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from videomem.core import tune_process

tune_process()  # an entry point like `videomem`: OpenMP threads sleep while they wait (set before torch loads)

from videomem.config import load_pipeline
from videomem.models.registry import ModelSet
from videomem.pipeline.runner import ingest
from videomem.store import Store

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "egolife"


def _days(folder: Path, days: list[int] | None, into: Path) -> Path:
    """The person's folder, or a copy of the chosen days' folders only (a few MB)."""
    if not days:
        return folder
    for day in days:
        shutil.copytree(folder / f"DAY{day}", into / f"DAY{day}")
    return into


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--person", default="A1_JAKE")
    parser.add_argument("--days", help="comma-separated day numbers (default: every day)")
    parser.add_argument("--keep", type=Path, help="build the store in this new folder and keep it")
    parser.add_argument("--models", help="a models profile, a file or a shipped name (default: offline)")
    args = parser.parse_args()
    days = [int(d) for d in args.days.split(",")] if args.days else None
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    with tempfile.TemporaryDirectory() as tmp:
        captions = _days(args.data / "DenseCaption" / args.person, days, Path(tmp) / "captions")
        transcripts = _days(args.data / "Transcript" / args.person, days, Path(tmp) / "transcripts")
        pipeline = load_pipeline("egolife")
        started = time.perf_counter()
        if args.keep is not None and args.keep.exists():
            parser.error(f"--keep {args.keep}: exists already; name a new folder")
        with Store(args.keep or Path(tmp) / "store", create=True) as store:
            report = ingest(
                [], store, pipeline, lambda: ModelSet.from_file(args.models), show_progress=False, timeline="egolife",
                captions=captions, transcripts=transcripts,
            )
            for result in report.results:
                note = f" ({result.note})" if result.note else ""
                print(f"{result.stage}: {result.seconds:.1f} s, {result.done} done, {len(result.failures)} failed{note}",
                      flush=True)
            for what, why in report.all_failures():
                print(f"failed: {what}: {why}", flush=True)
            clips = store.query("SELECT COUNT(*) FROM clips")[0][0]
        wall = time.perf_counter() - started
    print(f"{args.person} days {args.days or 'all'}: {clips} clips, wall {wall:.0f} s, peak RSS {_peak():.0f} MiB, "
          f"commit {commit}")


def _peak() -> float:
    """Peak resident memory of this process so far, MiB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

if __name__ == "__main__":
    main()
