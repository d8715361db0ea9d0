"""Answers on real English captions: A1_JAKE's translated hours, questions written apart from the reader.

The release's `Sync/` hours of DAY4-DAY6 (dense captions translated to English; DAY1's are left
out, the held-out day) are laid on WorldMM's 30-s grid as `A1_JAKE_30sec.json` (each window's
caption sentences joined, the form WorldMM's released captions take), beside the release's
transcripts of the same hours; `videomem ingest` builds the memory from them alone (offline
models, the egolife pipeline) and `videomem eval egolife` asks `benchmarks/data/
egolife_sync_questions.json`: 64 questions in EgoLifeQA's released layout, written from those
captions by a writer who read neither the offline reader nor any benchmark's questions (each
record's `reason` cites the lines that answer it). The development week is glossed Chinese;
these hours are the English the held-out day's memory is built from.

    python benchmarks/egolife_sync.py [--data ../shared/data/egolife] [--out DIR] [--agent NAME ...]

Last line: `egolife sync: worldmm N/64, telemem N/64, caption-rag N/64, commit C`.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE.parent / ".." / "shared" / "data" / "egolife"
QUESTIONS = HERE / "data" / "egolife_sync_questions.json"
HELD_OUT = "DAY1"
GRID_S = 30


def _clock(seconds: int) -> str:
    return f"{seconds // 3600:02d}{seconds // 60 % 60:02d}{seconds % 60:02d}00"


def thirty_second_captions(sync: Path) -> list[dict]:
    """WorldMM's 30-s caption records from the `Sync/` hours (but the held-out day's): each
    window's caption sentences, in order, joined."""
    out = []
    for path in sorted(sync.glob("A1_JAKE_DAY*_*.json")):
        day, hour = path.stem.split("_")[2:4]
        if day == HELD_OUT:
            continue
        windows: dict[int, list[str]] = {}
        for video in json.loads(path.read_text()):
            for line in video["data"]:
                if line["type"] != "caption":
                    continue
                start = line["start"] // 10000 * 3600 + line["start"] // 100 % 100 * 60 + line["start"] % 100
                windows.setdefault(start // GRID_S * GRID_S, []).append(line["text"].strip())
        out += [{"start_time": _clock(w), "end_time": _clock(w + GRID_S), "text": " ".join(windows[w]), "date": day,
                 "video_path": f"{day}/A1_JAKE_{day}_{hour}.mp4"} for w in sorted(windows)]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA, help="the release files (README of ../shared/data/egolife)")
    parser.add_argument("--out", type=Path, help="keep the store and the run here (a new folder)")
    parser.add_argument("--agent", action="append", help="agents to ask (default: worldmm, telemem, caption-rag)")
    args = parser.parse_args()
    agents = args.agent or ["worldmm", "telemem", "caption-rag"]
    sync = args.data / "Sync"
    if not sync.is_dir():
        sys.exit(f"egolife sync: no Sync/ folder under {args.data} (the release files, see its README)")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    with tempfile.TemporaryDirectory() as tmp:
        work = args.out or Path(tmp)
        captions, transcripts = work / "captions", work / "transcripts"
        captions.mkdir(parents=True)
        records = thirty_second_captions(sync)
        (captions / "A1_JAKE_30sec.json").write_text(json.dumps(records, ensure_ascii=False))
        for day, hour in sorted({(r["date"], r["start_time"][:2]) for r in records}):
            (transcripts / day).mkdir(parents=True, exist_ok=True)
            name = f"A1_JAKE_{day}_{hour}000000.srt"
            shutil.copy(args.data / "Transcript" / "A1_JAKE" / day / name, transcripts / day / name)
        videomem = str(Path(sys.executable).with_name("videomem"))
        subprocess.run([videomem, "ingest", "--store", str(work / "store"), "--timeline", "egolife", "--pipeline",
                        "egolife", "--captions", str(captions), "--transcripts", str(transcripts)], check=True)
        subprocess.run([videomem, "eval", "egolife", "--questions", str(QUESTIONS), "--store", str(work / "store"),
                        *[a for agent in agents for a in ("--agent", agent)], "--out", str(work / "run")], check=True)
        results = json.loads((work / "run" / "compare.json").read_text())["agents"]
    scores = ", ".join(f"{r['agent']} {r['correct']}/{r['questions']}" for r in results)
    print(f"egolife sync: {scores}, commit {commit}")


if __name__ == "__main__":
    main()
