"""Which evidence the answer step reads best: one retrieval per question, several compositions.

For each question of an EgoLifeQA file, the worldmm agent's retrieval rounds and caption RAG's
top captions are gathered once; the answer step of the models profile (offline by default)
then answers from each composition of that evidence:

* `worldmm`: every round's items, as the worldmm agent answers;
* `caption-rag`: caption RAG's captions, as the caption-rag agent answers;
* `worldmm fine`: worldmm's items of at most a minute (30-s captions, short intervals);
* `worldmm, one source`: only the items of one memory (episodic, semantic, timeline);
* `caption-rag + worldmm fine`: caption RAG's captions, then worldmm's short items.

Prints accuracy per composition and per EgoLifeQA type; the last line names the commit. The
retrieval is the agents' own (no answer is scored twice on different evidence by chance), so
the differences are the answer step's: how it reads more, less or other text.

    python benchmarks/evidence_mix.py --store STORE --questions dev.json [--limit N]
"""

from __future__ import annotations

import argparse
import subprocess
import time
from collections import Counter
from collections.abc import Callable

from videomem.core import tune_process

tune_process()  # an entry point like `videomem`: OpenMP threads sleep while they wait (set before torch loads)

from videomem.agent.react import Agent
from videomem.config import load_agent, load_models
from videomem.eval.harness import load_questions
from videomem.eval.targets import with_clip_windows
from videomem.evidence import Evidence
from videomem.models.registry import ModelSet
from videomem.models.tasks import require
from videomem.models.tasks.agent import Answering
from videomem.store import Store

SHORT = 60.0
"""Seconds: an item this long or shorter is fine-grained (a 30-s caption, a short interval)."""

Mix = Callable[[list[Evidence], list[Evidence]], list[Evidence]]
MIXES: dict[str, Mix] = {
    "worldmm": lambda w, c: w,
    "caption-rag": lambda w, c: c,
    "worldmm fine": lambda w, c: [e for e in w if e.t_end - e.t_start <= SHORT],
    "worldmm episodic": lambda w, c: [e for e in w if e.source == "episodic"],
    "worldmm semantic": lambda w, c: [e for e in w if e.source == "semantic"],
    "worldmm timeline": lambda w, c: [e for e in w if e.source == "timeline"],
    "caption-rag + worldmm fine": lambda w, c: c + [e for e in w if e.t_end - e.t_start <= SHORT],
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", required=True)
    parser.add_argument("--questions", required=True, help="an EgoLifeQA file (a JSON list of records)")
    parser.add_argument("--limit", type=int, help="the first N questions only")
    args = parser.parse_args()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    models = ModelSet(load_models(None))
    answering = require(models.language, Answering)
    right: dict[str, Counter] = {name: Counter() for name in MIXES}
    asked: Counter = Counter()
    started = time.perf_counter()
    with Store(args.store, read_only=True) as store:
        questions = [with_clip_windows(store, q) for q in load_questions("egolife", args.questions)][: args.limit]
        worldmm, rag = Agent(store, models, load_agent("worldmm")), Agent(store, models, load_agent("caption-rag"))
        for q in questions:
            found_w = worldmm.ask(q.question, list(q.choices), q.until, q.video_id).evidence
            found_c = rag.ask(q.question, list(q.choices), q.until, q.video_id).evidence
            asked.update(["all", q.category])
            for name, mix in MIXES.items():
                out = answering.answer(q.question, list(q.choices), mix(found_w, found_c), now=q.until)
                right[name].update(["all", q.category] if out.choice == q.answer else [])
    types = sorted(t for t in asked if t != "all")
    print(f"{'evidence':28s} {'all':>14s} " + " ".join(f"{t:>14s}" for t in types))
    for name in MIXES:
        cells = [f"{right[name][t]}/{asked[t]}" for t in ["all", *types]]
        print(f"{name:28s} " + " ".join(f"{c:>14s}" for c in cells))
    print(f"evidence mix: {asked['all']} questions, worldmm {right['worldmm']['all']}, caption-rag "
          f"{right['caption-rag']['all']}, best {max(MIXES, key=lambda n: right[n]['all'])}, "
          f"{time.perf_counter() - started:.0f} s, commit {commit}")


if __name__ == "__main__":
    main()
