"""Scripted benchmarks: videos whose facts are known to the second, with questions about them.

Every fact is large, high-contrast on-screen text (plus a coloured shape and figures for the
people in it), so the offline models, which read pixels with OCR, can honestly find it, and a
test knows exactly which clip holds each answer. Events start on clip boundaries and last whole
clips, so one clip always contains one whole event.

Distractor options are facts that also appear in the video at other times (another person's
action, an earlier place of the same keys, yesterday's lunch), so a correct answer needs the
right moment, not just "which option appears anywhere". EgoLife-style questions are asked at
several query times with different correct answers.

Controls, so that retrieval is not trivial and no method fits one wording: both formats hold
idle footage (a room and nobody doing anything) and distractor events (on-screen text that names
the people, places and things the questions ask about, but answers none of them: "LOOKING FOR
THE KEYS", "BOB READS A BOOK"); and every corpus comes with a paraphrased question set,
`paraphrased/<questions file>`: the same questions about the same videos, each reworded (another
template, a synonym for its verb or its thing) and its options in another order.

Two outputs:
* `lvbench`: one video (`videos/<key>.mp4`) and `video_info.meta.jsonl`;
* `egolife`: a corpus of 30-s clips `videos/DAYn/DAYn_A1_JAKE_HHMMSSFF.mp4` across days and
  `EgoLifeQA_A1_JAKE.json`.
All also write `script.json`, the ground-truth list of events.

`--speech` adds a sound track to every video (Debian espeak-ng, several voices) with lines
whose content never appears on screen, as text or as a drawn thing: where
an item was left, what someone is called, a code or number. They are spoken inside clips (in
idle footage and during events alike), each within one clip, and the question file gets a
`need_audio` question about each line, so only the sound track can answer it. `speech.json`
records what was said and when (the ground truth a fake speech model can read from). The spoken
script draws on its own random stream: with `--speech` the pictures, events and other questions
are exactly those of the same seed without it, and without `--speech` nothing changes at all.

The modules: `vocabulary` (the words and looks), `scripts` (the two scripts and `synth()`),
`formats` (question specs and the two benchmark file formats), `paraphrase`, `speech` (the
spoken track), `render` (pixels and encoding) and `second` (the second question writer).
"""

from videomem.synth.formats import SynthFormat
from videomem.synth.scripts import MIN_MINUTES, ScriptedEvent, SynthCorpus, synth
from videomem.synth.second import write_second
from videomem.synth.speech import SpokenLine

__all__ = ["MIN_MINUTES", "ScriptedEvent", "SpokenLine", "SynthCorpus", "SynthFormat", "synth", "write_second"]
