"""Answer a question by scoring each option against the evidence, sentence by sentence.

Words are spaCy lemmas of the lower-cased text; an evidence word matches as written, by its
lemma as a noun, a verb or an adjective, and by gerund stem (`nlp.forms`), so 'MAKING COFFEE'
supports 'Make coffee'; an option's noun also by the key of its stem (`nlp.root`), so 'The
mopping' is in 'Ana mops the hall'. The question's *content words* are its lemmas without
stopwords (but for a few that spaCy lists and that say what happened, `_KEEP`: "empty", "full",
"call"), without the cue words below, words naming the recording itself ("the end of the video",
`intent.recording_words`) or a verb that only says something happened, of a "which" or "what"
("which of these came first?", `intent.occurrence_words`: "came" is no word an option's caption
must hold, and "comes round" would support one for it), and without words that no evidence item holds (those cannot
tell items apart; no list of question phrasings is kept); where the question names a time
(any cue below), without words that no item *at that time* holds, when some item lies there:
"what did we have for lunch yesterday?" is told by yesterday's items, and "lunch" in today's
caption would only draw the answer to today.

**Evidence weight.** By rank among the items of the memory that returned it, in the order it
returned them (each memory scores on its own scale: a cosine, a PPR sum, a fused rank; a memory
whose scores are small is not ranked after another's by them): 1, 0.83, 0.71, …, times sqrt(60 s / the
footage the item spans) for an item longer than a minute (`SPECIFIC_S`: a 10-min summary 0.32,
an hour's 0.13), since the more an item tells of, the likelier a wrong option's words turn up in
it by chance. Cues in the question then
reweigh the evidence *about the question* (an item is about it when it holds at least half of
the question's content words, or as many as the best item holds, or every word of the
happening itself, `_Read.core`: "the kettle" of "when was the kettle on the counter last
used?"):
* a question about an end of the timeline (`intent.time_position`: "most recently", "at the
  very start", "originally", "in the end", "newest", "at the moment", "a little while ago", "how does the video
  end?", …): those items ranked by time instead, latest (or earliest) first, weights 1, 1/2, 1/3, …; other items × 0.3 (by time of day when
  the question also names a part of the day: "first thing in the morning"; but by day for a
  habit that changed, "what did I use to drink in the morning?"). An ordinal past
  the first ("the second time", "the penultimate visit", `TimePosition.nth`) counts occasions
  instead: the items holding the whole happening in time order, those that touch one occasion
  (`_occasions`), the nth from that end weighing 1, its neighbours 1/2, 1/3, …. Asked while
  the happening goes on again ("now that I'm on the sofa, what did I do the last time I sat
  on it?", `intent.marks_present`; not "where is it now?", whose "now" is the end asked for),
  the latest occasion, when it ends less than `PRESENT_S` before `now`, is the one in progress
  and ranks after the others. The words that said so are cues, not content to look for;
* a day of the recording named by its number ("on the second day", "day 3",
  `daytime.question_window`), by what happened on it ("the day the meal was pizza": the one
  day on which the items holding that clause's words were recorded), or relative to the query
  time `now` when said of the question's main verb ("what did I cook yesterday?", "where did I
  go yesterday afternoon?", "who did I play chess with today?", `intent.relative_day`; not
  "Noor's errands for today" nor "who noticed that the bins were not emptied yesterday?"):
  items recorded on it (in that part of it) keep their weight, others × 0.3, and an end of the
  timeline is looked for among that day's items;
* a clock time ("at 12:35", "DAY2 11:09:42"; on a named day, "at 10:00" is that day's hour;
  without one, a place in the recording, "at 04:10", unless no evidence lies within an hour of
  that place and some lies near the time of day it reads as: then that time on each such day,
  `clocks.of_day`, the last by the query time when there is one; a time of day said in words, "a
  quarter past three", "7 pm" (`daytime.spoken_clocks`), is a time of day only, 5 minutes
  either side (`daytime.APPROXIMATE_S`); two times of day, in digits or in words ("2 pm",
  "noon"), joined by "and", "to", "until" or a dash name the stretch between them, and one said
  to run on ("from 6 p.m. on", "since 4 pm") the stretch to its day's end,
  `clocks.question_stretches`): items whose range holds it (overlaps the stretch by more than a
  second) keep their weight, ranked among the items that hold it, and count in full up to the
  stretch's length or the shortest holding item's, whichever is longer; others × 0.3 — except for where something is
  (intent `state`: "where were the scissors at noon?"), which is where it was last put by then:
  the items about the question that end by that time, latest first, as for "most recently",
  on that day or an earlier one, the day and the part of it placing only the moment; likewise
  where something was right after (before) a happening ("right after my coffee on DAY3, where
  were the keys?", `intent.asks_whereabouts`), by the end (start) of the happening's latest
  occasion on the day named;
* "morning", "noon", "afternoon", "evening", "night" (`daytime.PERIODS`), or a meal the
  question is placed at ("what did we have for lunch?", "who spilled juice during dinner?";
  `intent.meal_time`, the hours of `daytime.MEALS`; not "after lunch", nor "what did I buy for
  dinner?"): items recorded at that time of day keep their weight, others × 0.3;
* a part of the recording (its middle, "in the middle of the video", "halfway through"; or a
  part from one end, "the last part of the video", "the second half", `intent.recording_part`):
  items whose midpoint lies in that share of what their video's evidence covers keep their
  weight, others × 0.3; likewise a stretch of time from one end ("the first ten minutes",
  "the last hour", `intent.recording_stretch`; the last before `now` when the question is
  asked during the recording, `_in_stretch`);
* a clause placing the question before or after another happening ("right before she boils the
  pasta", "after lunch", `intent.placing_clause`; not where something was then, above): the
  items holding every word of that
  happening found (but one spanning a finer one that holds it: a window ends after the
  happening does), the other items of their clock that end before it starts (or start after
  it ends) weigh 1, 1/2, 1/3, … nearest first, counting only those that tell something the
  happening and the nearer items did not (windows of the same room showing nothing new between
  a happening and the next are not what came next; they weigh × 0.3), the items on the other
  side of every occasion of the happening 0 (what came after it cannot be what came before),
  the rest × 0.3, and the happening's words are left out of what the question is about; not
  when the question also asks for an end of the timeline ("after the last time I cut fruit":
  the occasion in progress or the one before it). A clause placing it during another happening
  does not reweigh: the items holding a recurring happening (a chat with the same two people)
  are every occasion of it.

**Lexical support** of an option by a sentence:

    weight × (0.3 + 0.7 × relevance) × coverage

* relevance: the share of the question's content words within `NEAR` (8) words of the option's
  own words in the sentence (a glossed 30-s caption is one long sentence, and a name twenty
  words away from the question's verb is not who did it) — running on into the item's
  neighbouring described sentences (a caption told in short sentences), a word there counting
  `NEIGHBOUR` (half), not into a line of speech (`_caption_runs`) —, or half the sentence's share,
  whichever is larger; the sentence's share is the share of the question's content words in
  it, or 0.8 × that share in the whole evidence item (a location header and an action shown in
  one clip belong together); the option's own words are left out of the question's here ("room"
  in "which room …?" says nothing for "living room" it does not say for "garden");
* coverage: the weighted share of the option's distinguishing words in the sentence (words
  that every option has and stopwords are dropped; numbers and place words are kept, place words
  at half weight), + 0.5 when the whole option appears letters-and-digits-only ('ROOM418' =
  'ROOM 418'), + 0.5 more when it equals a quoted string there (on-screen text, speech); a
  colour option's coverage is divided by the number of colours the sentence names, unless it
  stands right before a word of the question ("a yellow card": the card's colour, `_said_of`);
  halved where the question asks what one person did ("what did I get?", "which drink did
  Nicous take?", `intent.question_actor`) and every word of the option in the sentence hangs
  from a clause whose subject is someone else ("Alice chose beef noodles and I chose
  dumplings", `nlp.clause_subjects`, `_done_by_others`);
* an item that holds none of the question's content words the evidence holds supports an
  option at `UNRELATED` (0.3) of that: a well-ranked window of the same rooms says little of
  where the thing asked about went.

An option's lexical score adds up what the evidence as a whole says for it: its best support in
each item, the three best items' summed with weights 1, 1/2, 1/4 (`AGREEMENT`), so an option
that several items support (a clip, the fact drawn from it, the window that holds it) leads one
that a single item names by chance. An option is a claim made of all its words: the score
is scaled by 0.5 + 0.5 × the share of its distinguishing words that some weighted item holds
(`UNHELD`), so of two summaries that the same items support, the one whose last part nothing
mentions ("… Emma dropping by") loses to the one whose every part is found somewhere.

**Some question shapes get an explicit rule**, because no sentence states their answer; each
reads typed evidence fields, never a memory's prose:
* A count question (`intent.py`: "how many", "how often", "how frequently", … read from the
  parse) with numeric options ("Once", "3 times"): a count a memory computed
  (`Evidence.counts`, timeline memory: of an event, or of an entity's separate appearances) for
  what is named by all of the question's content words and by nothing the question does not
  say (not where the question names a time: the memory counted over all of its history), else
  the moments fully about the question, and at the time it names, are counted — evidence intervals
  (`Evidence.spans`; of an item's intervals, those whose text holds all the content words when
  any does: an episodic window's finer captions that name the event), and the typed moments an
  item carries (`Evidence.moments`: object memory's sightings, a semantic fact's supporting
  moments) at the time the question names — merging moments that touch in
  time (one event spans several clips); the
  option naming that count scores 1 and the others 0 (a stray "6" in the evidence says nothing
  about a count). A count of people ("how many people …", "how many of us …",
  `intent.counts_people`) is of those named in the best-weighted item holding the whole
  happening (`_people`). A count of things ("how many clothes hangers …", `intent.counted_thing`;
  not of occasions, people or units of time) is first the number a sentence puts before the
  thing's word ("I took four hangers", "we bought 5 pairs in total"), each option scoring the
  best support of a sentence saying its number (`_stated`): how many moments show a thing
  counts how often it was handled, not how many there were. How often a thing was moved
  (`intent.moved_thing`), where no evidence says the moving, is how often the place said of it
  changed at the time named (`_moves`, `nlp.places_of`).
* A question that asks what a stretch was mostly about ("what was the morning mostly about?",
  "which best sums up yesterday afternoon?", "the main topic", `intent.asks_summary`): each
  option scores the share of the footage of the items at the time the question names that its
  parts explain, times the share of its parts found there (`_footage`; an option lists the
  stretch's happenings between commas and "and", and an item counts its seconds times the
  share of one part's words it holds, in any of its sentences): what most of the stretch
  shows, told by the hour-long window as much as by its clips. Where a stretch
  is named, each word counts by the share of the footage holding it that lies in the stretch:
  a video's topic, in every part of it, does not tell one part from another.
* The option "Me" (the camera's wearer, `_first_person`) is found where a sentence says "I", as
  a name is where it names someone, and takes the other options' mean MiniLM cosine.
* Options that are all time ranges in any form `timeline.parse_range` reads ("12:30-13:00",
  "DAY2 11:00 to 11:30"), for a question that is not a count: each scores the best time
  overlap (IoU) with an item about the question, times that item's weight.
* Options that each name a day relative to now ("this morning", "yesterday at noon", "last
  night", "the afternoon before yesterday", "2 days ago"; `daytime.relative_window`), for a
  question that is not a count, when the agent passes the query time as `now`: each scores how
  well the midpoint of an interval about the question (as for amounts of time below) falls in
  the stretch of time it names (`daytime.closeness`), times the item's weight, best item first.
  Among such options an amount of time ago ("half a day ago") names the stretch a quarter of
  the amount either side of its moment (`options.ago_window`).
* Options that name days by number ("DAY2", "the second day") or a clock time on one ("around
  12:30 on DAY3"), with at most one saying it did not happen or happened every day
  (`options.option_days`): as above, and "did not happen" wins where nothing about it is found;
  asked where it did not happen (`intent.asks_negated`), the day with least about it
  (`_which_day`).
* Which happening came most or least often (`intent.frequency_extreme`): each option by the
  separate moments the evidence shows it at the time named (`_frequency`). What happened on
  every day ("each morning", "on all three days", "daily", `intent.asks_every_day`): each
  option by the number of days the evidence shows it on (`_daily`), as a habit is told by the
  days it comes back on.
  A moment less than `PRESENT_S` before `now` is the occasion the question is asked on ("when
  did I last use the knife?", asked holding it), not one it asks about.
* Options that say yes and no ("Yes" / "No, she didn't", `_polarity`): yes when one evidence
  item holds every content word of the question, whether or not others hold them
  (`_Read.claim`), lies at the time the question names (`_Read.fits`), lies beside the
  happening a clause places the question before or after when one does, and says it without a
  negation ("no one comes"); no otherwise.
* A who-question about speech (intent `who` and a verb of speech, `intent.asks_about_speech`:
  "who brought up the concert", "which person was talking about …"): each option scores by the transcript lines whose
  speaker it names (`Evidence.speech`), the share of the question's content words in the
  line times its item's weight, of the words of what was said when the question says it
  (`intent.what_was_said`: not "while I was repotting the fern" of "… who said the pot was not
  real clay?"); the speaker of the best-matching line wins.
* An order question (intent `order`: "… first, X or Y?", "which came later, …"), two of whose
  options name happenings the evidence records: the option found first wins (the later one when
  the question asks for it, `intent.asks_later`; the nth from the start for an ordinal of the
  verb or of a noun of happenings, "which chore did I do second?", `TimePosition.sequence`),
  each found at the start of the earliest
  evidence interval whose text names it (`Evidence.spans`: a timeline run, a coarse window's
  finer captions; its words but place words and parts of the day: "lunch at midday" is found
  where lunch is shown), never at a summary's own start when it has finer captions; an option
  no interval names in its words is found where an interval is closest to it in meaning of all
  the options (MiniLM cosine at least 0.25, 0.1 ahead of any other option's: "Bob dropping by"
  for "Bob comes to visit").
* Options that each list happenings in an order ("sanding the chair, then sweeping the floor",
  "cutting -> gluing"; where the question asks for an order, "in what order …?", also "market,
  kitchen and terrace"; `_steps`), for a question that is not a count: each scores the share of
  its consecutive pairs that the evidence records in that order, each happening found at the
  start of the earliest interval that names it, as for an order question above.
* A question asking which happening took the most or the least time
  (`intent.duration_extreme`: "which took the longest?", "spent the most time on"): each option
  is measured on the runs (`_runs`, below) of the intervals whose text names it, its longest
  run or, for time spent, their sum; the option alone at that extreme scores 1, the others 0.
* Options that each name a place in the recording ("around minute 4", "the 5-minute mark",
  "at 04:10"; `position.recording_window`; bare numbers where the question counts a unit into
  the recording, "how many minutes into the video …?", `intent.counts_into`), for a question
  that is not a count: each scores how well the midpoint of a run of evidence about the
  question (`_runs`, below) falls in its place (`daytime.closeness`, distances in units of the
  options' spacing), times the run's weight, best run first. Bare clocks ("around 10:30") that no evidence lies near as places in
  the recording, but near as times of day (`clocks.of_day`), are compared on the clock of the day.
* Bare numbers where the question counts days ("on how many days did I go jogging?",
  `intent.counted_unit`): the days on which items holding the whole happening (`_Read.core`)
  and spanning less than a day were recorded (`_days_recorded`).
* Options that are all amounts of time ("2 hours", "about 45 minutes ago", "a day and a half",
  "all day"; bare numbers where the question counts a unit of time, "how many minutes …?" "4"):
  a relative-time question (intent `when`, or "… ago" in every option) is measured from the
  cited moment (a run's midpoint) to the query time, which the agent passes as `now` (without
  it, no rule); a question about the time *between* two happenings ("how long between my
  lunch and the walk?", `intent.between_phrases`) is measured from the start of one's run to
  the other's, each run found on the items most about its own words, the two runs' weights
  multiplied; the time from one happening's first occasion to its last ("how much time
  separates Omar's first and last swim?", `intent.first_to_last`) from the start of its first
  run to the start of its last (`_first_to_last`); how long someone or something was away
  ("how long was the van gone?", `intent.absent_words`) is the longest stretch between two items naming it (`_absence`); any
  other asks how long something lasted, the duration of a run. A run (`_runs`)
  is made of the intervals about the question (`Evidence.spans`, chosen as for a count: a
  10-min window whose finer captions name the activity only in its last 3 minutes gives those
  3 minutes) of the items most about it (the largest share of the happening's words,
  `_Read.core`: a time is measured where the kettle was filled, whether or not that caption
  names the counter the question places it on), a coarser
  interval left out where a finer one inside it is found, and those that touch merged across
  items (three consecutive clips of one activity are one run). Each option scores
  exp(-|ln(measured / its amount)|) times the run's best item weight, best run first:
  arithmetic on the evidence's times, not words.

**Speech nobody transcribed.** A multiple-choice question that asks what was said
(`intent.asks_about_speech`: a verb of speech, "say", "tell", "mention", "hear", …, or a phrasal
one, "bring up", "point out") gets no option when no evidence
item holds any option's distinguishing words (as whole words) and some evidence is speech that
was heard but not transcribed (the offline profile has no speech model; the item's typed
`Evidence.speech` holds a line with `transcribed` false, whatever its prose says). The words that would decide are in
that speech, so the answer says when someone spoke and that the words are unknown, rather than
letting the weak prior pick.

**Free-form answers** are the evidence sentence closest to the question in words and meaning;
a question that asks for a colour ("what colour/color …") takes it from the sentences that
name a colour of the palette, when any does, a sentence naming k colours at 1/k of its support
(as for colour options, `_supports`: a thing's one colour says more than a list of the view's).

**Meaning.** MiniLM cosine between option and sentence (same weights and relevance) is added at
half weight, centred across options, so it decides only where words do not.

Ties go to the higher cosine, then to the earlier option (A before B): deterministic, never
random. Without any evidence the option closest in meaning to the question wins — a weak prior.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence, Set as AbstractSet
from dataclasses import dataclass, replace

import numpy as np

from videomem.choice import strip_label
from videomem.core import unit_rows
from videomem.evidence import Evidence, Span
from videomem.models.engines import TextEmbedder
from videomem.models.offline.clocks import CLOCK, last_before, of_day, question_stretches, question_times, unspoken
from videomem.models.offline.colours import PALETTE
from videomem.models.offline.daytime import (
    APPROXIMATE_S, MEALS, PERIODS, anchored_day, closeness, question_window, relative_window, spoken_clocks,
)
from videomem.models.offline.intent import (
    PART_WORDS, PRESENT_CUES, SPEECH_CUES, End, Extreme, Relation, TimePosition, absent_words, adverb_places, asks_about_speech, asks_every_day,
    asks_later,
    asks_negated, frequency_extreme,
    asks_sequence, asks_summary, between_phrases, counted_thing, counted_unit, counts_into, counts_people, duration_extreme,
    first_to_last, marks_present, meal_time, occurrence_words,
    asks_whereabouts, modifier_words, moved_thing, noun_lemmas, placing_clause, question_actor, question_intent, recording_part, recording_stretch,
    recording_words, relative_day, time_position, what_was_said,
)
from videomem.models.offline.nlp import (
    FIRST_PERSON, NEGATION, NUMBERS, WEARER, clause_subjects, forms, lemmas, person_names, places_of, quoted_spans,
    root,
    split_sentences, squash, stopwords, THIRD_PERSON, unit_seconds, word_forms, words,
)
from videomem.models.offline.options import ago_window, option_days, option_number, option_range, option_seconds
from videomem.models.offline.position import recording_window
from videomem.timeline import DAY, clock_of, format_clock, format_day
from videomem.video.transcripts import transcript_text

COLOUR_WORDS = frozenset({"colour", "color"})
"""Question lemmas that ask for a colour."""
COLOURS = frozenset(PALETTE) | {"grey"}
"""Colour names an option may be."""
SHADES = frozenset({"light", "dark", "pale", "bright", "deep"})
"""Words that may stand before a colour name in an option that is a colour ("dark blue")."""
SEMANTIC_WEIGHT = 0.5
OFF_CUE = 0.3
"""Weight factor for evidence that does not match a time cue of the question."""
SPECIFIC_S = 60.0
"""Seconds of footage an evidence item may span and count in full. A longer item (a 10-min or
1-h summary, a fact held for hours) weighs sqrt(SPECIFIC_S / its span): it tells of more moments
in as many words, so an option's words turn up in it by chance the more often the more it spans."""
PRESENT_S = 1800.0
"""Seconds before the query time that are still the present occasion, for options that name a
part of a day ("this morning", "last night"), hours long each."""
TOUCH = 1.0
"""Seconds between two moments or intervals within which they are one (clips abut, give or take)."""
BEST_SENTENCE_CHUNK = 16
"""Sentences embedded per call while looking for the best one (a free-form answer)."""
MEANING_FLOOR = 0.25
MEANING_MARGIN = 0.1
"""An interval names an order option in other words when its MiniLM cosine to that option is at
least the floor and leads every other option's by the margin."""
GAP_RUNS = 5
"""Best runs of each happening weighed against the other's for the time between them."""
NEAR = 8
"""Words either side of an option's word that count as near it: about a clause."""
SENTENCE_SHARE = 0.5
"""What the question's words elsewhere in the sentence count for, against near the option."""
NEIGHBOUR = 0.5
"""What a question word in a neighbouring sentence of the item, within `NEAR` words of the
option's, counts for beside one in the option's own sentence."""
AGREEMENT = (1.0, 0.5, 0.25)
"""What an option's best, second and third items' supports count for in its lexical score."""
UNHELD = 0.5
"""What an option's lexical score keeps when none of its distinguishing words is held by any
weighted evidence item (in full when all are)."""
MISATTRIBUTED = 0.5
"""What a sentence's coverage of an option keeps where someone other than the person the
question asks about does it ("Alice chose noodles and I chose dumplings", asked what I got)."""
PLACE_WORDS = frozenset(
    "top bottom left right front back up down on off in out under over above below behind before after "
    "inside outside".split()
)
UNRELATED = 0.3
"""An option's support from an item that holds none of the question's content words found in
the evidence, as a share of what the item's rank gives it: a well-ranked window of the same
rooms says little of where the thing asked about went."""
STATED_REACH = 2
"""How many words before the counted thing's word a number said of it may stand ("four power
banks")."""

_KEEP = PLACE_WORDS | frozenset(NUMBERS) | frozenset(
    {"first", "last", "empty", "full", "call", "put", "give", "take", "move", "show"})
"""Words of spaCy's stopword list that say what happened or how a thing was ("the room was
empty", "a phone call", "where did I put the scissors?"), kept as content."""
_LABEL = re.compile(r"^\s*[^\s:：][^:：]{0,39}?[:：]\s")
"""A speaker's label opening a line of speech ("Tasha: ...", "Others: ...")."""
_ARTICLE = re.compile(r"^\s*(?:a|an|the)\s+", re.IGNORECASE)
"""An option's leading article, no part of its whole-option match."""
_WE = frozenset({"we", "us", "our", "ours", "ourselves"})
"""Words by which a question counts the camera's wearer among those it asks about."""
_CUES = frozenset(PERIODS) | {"late", "early", "many", "time", "total"}
"""Words that steer weighting or counting, not content to look for ('latest' lemmatises to 'late');
the words that ask for an end of the timeline (`time_position`) are dropped per question."""


def names_colour(words: Iterable[str]) -> bool:
    """Whether the words are a colour and nothing else ("blue", "dark blue")."""
    said = set(words)
    return bool(said & COLOURS) and said <= COLOURS | SHADES


def _days_recorded(read: _Read, evidence: Sequence[Evidence]) -> int:
    """On how many days of the recording the happening asked about was recorded: the days of the
    items that hold all of it (`_Read.core`) and span less than a day. "How many days did I go
    jogging?" counts days, not how long one jog lasted; a stay of three days is recorded on
    three."""
    return len({int((e.t_start + e.t_end) / 2 // DAY) for e, cover in zip(evidence, read.core_cover)
                if cover >= 1.0 and read.core and e.t_end - e.t_start < DAY})


def _polarity(option: str) -> bool | None:
    """True for an option that says yes ("Yes", "Yes, she did", "True"), False for one that says
    no, None for any other."""
    first = words(option)[:1]
    return True if first in (["yes"], ["true"]) else False if first in (["no"], ["false"]) else None


def _claimed(read: _Read) -> bool:
    """Whether one evidence item holds every word of what the question says happened (its
    `claim`), at the time the question names (`_Read.fits`), beside the happening a clause
    places it before or after when one does, and says it without a negation in the sentences
    that hold those words ("the box lies at the front door; no one comes" says nobody was
    there)."""
    for i, said in enumerate(read.item_words):
        if not (read.claim <= said and read.fits[i] and (read.beside is None or read.beside[i] > 0)):
            continue
        if not any(NEGATION.search(s.text) for s in read.sentences if s.item == i and s.words & read.claim):
            return True
    return False


def _beside(relation: Relation, anchors: np.ndarray, evidence: Sequence[Evidence],
            item_words: Sequence[frozenset[str]]) -> np.ndarray:
    """Per item, where a clause places the question by the happening the `anchors` hold: 1,
    1/2, 1/3, … for the items of an anchor's clock that end before it starts (`relation`
    "before") or start after it ends ("after"), nearest first (of two as near, the shorter: the
    clip that starts an hour's window is nearer than the rest of the hour), counting only
    those that tell something the anchors and the nearer items did not (a window of the same
    room showing nothing new between the happening and the next one is not what came next); 0
    for the
    others beside it and for the items of no anchor's clock; -1 for the items on the other side
    of every anchor of their clock, which what is asked cannot be. An anchor that spans a finer
    one (a 10-min window over the clip that shows the happening) is left out: it ends after the
    happening does, and the items beside it are not beside the happening."""
    held = [evidence[i] for i in _finest(anchors, evidence)]
    gaps = []
    out = np.zeros(len(evidence))
    for i, item in enumerate(evidence):
        ahead = [a.t_start - item.t_end if relation == "before" else item.t_start - a.t_end
                 for a in held if clock_of(a.video_id) == clock_of(item.video_id)]
        if anchors[i] or not ahead:
            continue
        if max(ahead) >= -TOUCH:
            gaps.append((min(g for g in ahead if g >= -TOUCH), item.t_end - item.t_start, i))
        else:
            out[i] = -1.0
    told = set().union(*(item_words[i] for i in np.flatnonzero(anchors)))
    rank = 0
    for _, _, i in sorted(gaps):
        if item_words[i] - told:
            out[i] = 1.0 / (1.0 + rank)
            rank += 1
            told |= item_words[i]
    return out


def _finest(anchors: np.ndarray, evidence: Sequence[Evidence]) -> list[int]:
    """The anchors (items that hold a happening) that span no finer one of their clock: a
    10-min window over the clip that shows the happening ends after the happening does."""
    anchored = np.flatnonzero(anchors).tolist()
    return [i for i in anchored if not any(
        j != i and clock_of(evidence[j].video_id) == clock_of(evidence[i].video_id)
        and evidence[i].t_start <= evidence[j].t_start and evidence[j].t_end <= evidence[i].t_end
        and evidence[j].t_end - evidence[j].t_start < evidence[i].t_end - evidence[i].t_start for j in anchored)]


def _placed_at(relation: Relation, anchors: np.ndarray, evidence: Sequence[Evidence], on_day: np.ndarray) -> float | None:
    """The moment right after (before) the happening the `anchors` hold: the end (start) of its
    latest occasion, of those on the day the question names when any is (`_finest`). None for
    a happening during which the question is asked, or none held."""
    if relation == "during":
        return None
    held = _finest(anchors, evidence)
    held = [i for i in held if on_day[i]] or held
    if not held:
        return None
    latest = max(held, key=lambda i: evidence[i].t_end)
    return evidence[latest].t_end if relation == "after" else evidence[latest].t_start


def _in_part(evidence: Sequence[Evidence], part: tuple[float, float]) -> np.ndarray:
    """Per item, whether its midpoint lies in the `part` (fractions from, to) of the stretch its
    video's evidence covers (the recording, as far as the evidence tells)."""
    covered = _covered(evidence)
    inside = []
    for e in evidence:
        lo, hi = covered[clock_of(e.video_id)]
        at = (e.t_start + e.t_end) / 2
        inside.append(lo + part[0] * (hi - lo) <= at <= lo + part[1] * (hi - lo))
    return np.array(inside, bool)


def _in_stretch(evidence: Sequence[Evidence], end: End, seconds: float, now: float | None) -> np.ndarray:
    """Per item, whether its midpoint lies in the stretch of `seconds` at one `end` of what its
    video's evidence covers ("the first ten minutes", `_covered`); "the last hour" before the
    query time `now` when there is one (a question asked during the recording), as of then."""
    middle = np.array([(e.t_start + e.t_end) / 2 for e in evidence])
    if now is not None and end == "latest":
        return (middle >= now - seconds) & (middle <= now + TOUCH)
    covered = _covered(evidence)
    bounds = np.array([covered[clock_of(e.video_id)] for e in evidence]).reshape(-1, 2)
    if end == "earliest":
        return middle <= bounds[:, 0] + seconds
    return middle >= bounds[:, 1] - seconds


def _covered(evidence: Sequence[Evidence]) -> dict[str, tuple[float, float]]:
    """Per clock (`timeline.clock_of`), the stretch its evidence covers (the recording, as far as
    the evidence tells); a video on a clock of its own starts at 0, whatever is found of it."""
    covered: dict[str, tuple[float, float]] = {}
    for e in evidence:
        clock = clock_of(e.video_id)
        lo, hi = covered.get(clock, (0.0 if clock == e.video_id else e.t_start, e.t_end))
        covered[clock] = (min(lo, e.t_start), max(hi, e.t_end))
    return covered


def _where_named(fits: np.ndarray) -> np.ndarray:
    """The items at the time the question names (`_Read.fits`), or all of them when none lies
    there: evidence from elsewhere is still all there is to read."""
    return fits if fits.any() else np.ones(len(fits), bool)


def _inside_s(item: Evidence | Span, stretches: Sequence[tuple[float, float]]) -> float:
    """Seconds of the item's range inside the stretches (which do not overlap each other)."""
    return min(sum(max(0.0, min(item.t_end, b) - max(item.t_start, a)) for a, b in stretches),
               max(item.t_end - item.t_start, 0.0))


def _holds(item: Evidence, start: float, end: float) -> bool:
    """Whether an item holds a moment the question names (`start == end`) or overlaps a stretch
    it names by more than a touch."""
    if start == end:
        return item.t_start - TOUCH <= start <= item.t_end + TOUCH
    return min(item.t_end, end) - max(item.t_start, start) > TOUCH



def _which_day(days: Sequence[tuple[float, float] | str], on: np.ndarray, negated: bool) -> np.ndarray:
    """Per option of `options.option_days`, given how well the evidence about the question lies on
    each named day (`on`, in the named days' order): a day by that; "never" where nothing about
    it lies on any; "every" by how well it lies on the day it lies on least, against the day it
    lies on best. Asked where it did not happen (`intent.asks_negated`), a day by how little lies
    on it and "every" (or "never": it never failed to) as before."""
    best, least = (float(on.max()), float(on.min())) if len(on) else (0.0, 0.0)
    dated = iter(on)
    out = []
    for day in days:
        if not isinstance(day, str):
            found = float(next(dated))
            out.append(1.0 - found / best if negated and best > 0 else 1.0 if negated else found)
        elif negated or day == "every":
            out.append(least / best if best > 0 else 0.0)
        else:
            out.append(1.0 if best == 0 else 0.0)
    return np.array(out)


@dataclass(frozen=True)
class _Sentence:
    text: str
    item: int
    words: frozenset[str]
    squashed: str
    quotes: frozenset[str]
    tokens: tuple[frozenset[str], ...]
    """Each word's forms, in order (how near two words are)."""
    before: tuple[frozenset[str], ...]
    """The last `NEAR` words of the item's described sentences before it (`_caption_runs`): a
    short sentence ("I picked up the roll on the bed.") is about the question as far as the next
    one says ("I tore off a piece and handed it to Lucia."), at `NEIGHBOUR` weight."""
    after: tuple[frozenset[str], ...]
    """The first `NEAR` words of the item's described sentences after it."""


@dataclass(frozen=True)
class _Timing:
    """Where the question's time cues put each evidence item (`OptionScorer._timing`)."""

    periods: list[tuple[float, float]]
    """The hours of the parts of the day the question names ("morning"; not a meal's: the last
    lunch is that of the latest day, not the latest hour of any lunch)."""
    dated: bool
    """Whether the question names a day."""
    on_day: np.ndarray
    times: list[float]
    """The moments the question names."""
    stretches: list[tuple[float, float]]
    """The stretches it names (a moment as a stretch of no length)."""
    holds: np.ndarray
    """Per item: whether it holds a moment or overlaps a stretch the question names."""
    in_part: np.ndarray
    """Per item: whether it lies in the part of the recording the question names (all when none)."""
    inside: np.ndarray
    """Per item: whether it starts in a part of the day or at a meal the question names (all
    when none)."""
    fits: np.ndarray
    """Per item: whether it lies where every time the question names puts it (all when it names
    none; for `moment`, whether it was recorded by then)."""
    moment: float | None
    """The moment at which a question asks where something is (intent `state`): the clock
    time it names ("where were the keys at 10:00 on the first day?") or the end (start) of the
    happening it is placed right after (before: "right after my coffee, where were the keys?")."""


@dataclass(frozen=True)
class _Read:
    """The evidence as the scorer reads it for one question."""

    sentences: list[_Sentence]
    support: np.ndarray
    """Per sentence: its item's weight × how much the sentence is about the question."""
    share: np.ndarray
    """Per sentence: the share of the question's content words in it (or 0.8 × its item's)."""
    item_words: list[set[str]]
    """Per evidence item: the forms of its words."""
    weight: np.ndarray
    """Per evidence item."""
    cover: np.ndarray
    """Per evidence item: the share of the question's content words it holds."""
    asked: set[str]
    """The question's content words that some evidence item holds."""
    core: set[str]
    """Of those, the words of the happening itself (`intent.modifier_words` left out): all of
    `asked` when the question has no such words or only those."""
    core_cover: np.ndarray
    """Per evidence item: the share of `core` it holds."""
    ranked: bool
    """Whether the question asks for an end of the timeline (`intent.time_position`)."""
    claim: set[str]
    """What the question says happened: its content words, held by the evidence or not (but
    those of a happening it is placed before or after)."""
    fits: np.ndarray
    """Per evidence item: whether it lies where every time the question names puts it."""
    beside: np.ndarray | None
    """Per evidence item, when a clause places the question before or after another happening:
    its place beside that happening (`_beside`), 0 for an item not beside it, -1 for one on the
    other side of it."""
    actor: str | None
    """Whose doing the question asks about, when one person's (`intent.question_actor`: "i" or
    a name; not "we", which counts others in, nor in a question that asks who)."""
    stretches: list[tuple[float, float]]
    """The stretches of time the question names, each longer than a moment (`_Timing.stretches`)."""

    @property
    def found(self) -> set[str]:
        """The forms of the words of every evidence item."""
        return set().union(*self.item_words)


class OptionScorer:
    def __init__(self, embedder: TextEmbedder) -> None:
        self.embedder = embedder
        self.stop = frozenset(stopwords()) - _KEEP

    def _content(self, text: str) -> list[str]:
        return [w for w in lemmas(text) if w not in self.stop]

    # ------------------------------------------------------------ evidence

    def _claim(self, question: str, found: AbstractSet[str]) -> set[str]:
        """What the question is about: its content words, without cue and place words (an option
        carries 'in' or 'on'; the question's own 'in the evening' would only dilute the match;
        but "inside" and "outside" where something went, `intent.adverb_places`),
        each in the form the evidence (`found`, the forms of its words) holds it, when it holds
        one (`_held`). A clock time is a time cue, not words to look for."""
        position = time_position(question)
        cues = _CUES | (position.words if position else frozenset()) | recording_words(question) \
            | (PART_WORDS if recording_part(question) else frozenset()) | occurrence_words(question)
        untimed = CLOCK.sub(" ", unspoken(question))  # a clock time is a cue: "17" and "00" are no content
        nouns = noun_lemmas(question)
        places = PLACE_WORDS - adverb_places(question)
        return {_held(w, found, nouns) for w in self._content(untimed) if w not in cues and w not in places}

    @staticmethod
    def _timing(question: str, evidence: Sequence[Evidence], now: float | None,
                placed: tuple[Relation, np.ndarray] | None = None) -> _Timing:
        """Where the question's time cues put the evidence: the day (by its number, by what
        happened on it, or relative to `now`, the query time), the clock times or stretches, the
        part of the recording or a stretch from one end of it, the parts of the day, a meal, the
        happening a clause places it before or after (`placed`: the relation and the items that
        hold the happening)."""
        periods = [PERIODS[w] for w in set(lemmas(question)) if w in PERIODS]  # "in the mornings" names the morning too
        meal = meal_time(question)
        relative = relative_day(question)
        day = question_window(question) or anchored_day(question, evidence) \
            or (relative_window(relative, now) if relative is not None and now is not None else None)
        times = question_times(question, day, evidence)
        stretches = question_stretches(question, day, evidence)
        if day is None and now is not None:
            # a time of day read on several days is the last before the question ("what was I
            # doing at 10:30?" asked at 15:00 is this morning's)
            times = last_before(times, now, lambda t: t)
            stretches = last_before(stretches, now, lambda s: s[0])
        approximate = {t for _, hours in spoken_clocks(question) for t in times if t % DAY in hours}
        on_day = np.ones(len(evidence), bool)
        if day is not None:
            middle = np.array([(e.t_start + e.t_end) / 2 for e in evidence])
            on_day = (middle >= day[0]) & (middle < day[1])
        stretches = stretches or [(t - APPROXIMATE_S, t + APPROXIMATE_S) if t in approximate else (t, t) for t in times]
        holds = np.array([bool(times) and any(_holds(e, a, b) for a, b in stretches) for e in evidence], bool)
        # where something is at a moment is where it was last put by then (`_weights`), on that
        # day or before, not what the items at that moment show
        moment = None
        if times and question_intent(question) == "state":
            moment = max(times)
        elif placed is not None and asks_whereabouts(question):
            moment = _placed_at(*placed, evidence, on_day)
        part = recording_part(question)
        in_part = _in_part(evidence, part) if part is not None else np.ones(len(evidence), bool)
        if (stretch := recording_stretch(question)) is not None:
            in_part &= _in_stretch(evidence, *stretch, now)
        inside = np.ones(len(evidence), bool)
        hours = periods + ([MEALS[meal]] if meal is not None else [])
        if hours:
            hour = np.array([(e.t_start % DAY) / 3600 for e in evidence])
            inside = np.zeros(len(evidence), bool)
            for lo, hi in hours:
                inside |= ((hour >= lo) & (hour < hi)) | ((hour + 24 >= lo) & (hour + 24 < hi))
        if moment is not None:
            # the day, the part of it, the meal place the moment, not where the thing was last put
            everywhere = np.ones(len(evidence), bool)
            by_then = np.array([e.t_end <= moment + TOUCH for e in evidence], bool)
            return _Timing(periods, day is not None, on_day, times, stretches, holds, everywhere, everywhere, by_then, moment)
        fits = on_day & (holds | (not times))
        return _Timing(periods, day is not None, on_day, times, stretches, holds, in_part, inside, fits & in_part & inside, None)

    def _weights(
        self, question: str, evidence: Sequence[Evidence], about: np.ndarray, whole: np.ndarray, timing: _Timing,
        now: float | None = None,
    ) -> np.ndarray:
        """Per item, its rank within its memory reweighed by the question's cues (module
        docstring, `timing`); `about`: the items about the question, `whole`: those that hold
        the whole happening (`_Read.core`), the occasions an ordinal counts."""
        relevant = [i for i in range(len(evidence)) if about[i]]
        periods, on_day, times, holds = timing.periods, timing.on_day, timing.times, timing.holds
        position = time_position(question)
        if timing.moment is not None:
            # where something is at a moment: where it was last put by then, whichever day
            position = TimePosition("latest", frozenset())
            on_day = timing.fits  # recorded by then
            relevant = [i for i in relevant if on_day[i]]
            times = []
        elif timing.dated:
            relevant = [i for i in relevant if on_day[i]] or relevant
        # A memory's items come best first, each memory scoring on its own scale (a cosine, a
        # PPR sum, a fused rank): an item's rank is its place among its own memory's items, and
        # where the question names a time, among those of them that hold it or those that do not.
        weight = np.zeros(len(evidence))
        ranks: Counter[tuple[str, bool]] = Counter()
        for i, item in enumerate(evidence):
            weight[i] = 1.0 / (1.0 + 0.2 * ranks[item.source, holds[i]])
            ranks[item.source, holds[i]] += 1
        if position is not None and relevant:
            latest = position.end == "latest"
            # an end of a named part of the day ("the earliest chore of my mornings") is about
            # the hour, not the first day; that of a habit that changed is about the days
            clock = (lambda t: t % DAY) if periods and not position.change else (lambda t: t)
            order = sorted(relevant, key=lambda i: (-clock(evidence[i].t_end) if latest else clock(evidence[i].t_start), i))
            if latest and position.nth == 1 and now is not None and marks_present(question) \
                    and position.words - PRESENT_CUES:
                # "Now that I'm on the sofa, what did I do the last time I sat on it?": the
                # occasion in progress when the question is asked is not the last time before it
                occasions = _occasions(order, evidence)
                if len(occasions) > 1 and max(evidence[i].t_end for i in occasions[0]) > now - PRESENT_S:
                    order = [i for occasion in occasions[1:] for i in occasion] + occasions[0]
            weight *= OFF_CUE
            if position.nth == 1:
                for rank, i in enumerate(order):
                    weight[i] = 1.0 / (1.0 + rank)
            else:  # "the second time": occasions of the happening counted from that end, its neighbours after it
                for k, occasion in enumerate(_occasions([i for i in order if whole[i]] or order, evidence)):
                    weight[occasion] = 1.0 / (1.0 + abs(k - (position.nth - 1)))
        if times:
            weight *= np.where(holds, 1.0, OFF_CUE)
        weight *= np.where(timing.in_part, 1.0, OFF_CUE)
        weight *= np.where(timing.inside, 1.0, OFF_CUE)
        weight *= np.where(on_day, 1.0, OFF_CUE)
        spans = np.array([max(e.t_end - e.t_start, 0.0) for e in evidence])
        specific = np.full(len(evidence), SPECIFIC_S)
        if holds.any():
            # the time named is told of no more finely than by the finest item that holds it,
            # nor need be more finely than the stretch the question names
            asked = max(b - a for a, b in timing.stretches)
            specific[holds] = max(SPECIFIC_S, asked, spans[holds].min())
        return weight * np.sqrt(specific / np.maximum(spans, specific))

    def _read(self, question: str, evidence: Sequence[Evidence], now: float | None = None) -> _Read:
        # An item's words are its sentences' words: lemmatising the whole text as well would
        # run the tagger over every character twice (most of the answer step's time).
        sentences = []
        for i, item in enumerate(evidence):
            texts = split_sentences(item.text)
            said = [tuple(word_forms(text)) for text in texts]
            runs = _caption_runs(texts, item)
            for j, (text, tokens) in enumerate(zip(texts, said)):
                quotes = frozenset(squash(text[a + 1 : b - 1]) for a, b in quoted_spans(text))
                kin = [k for k, run in enumerate(runs) if run is not None and run == runs[j]]
                before = tuple(t for k in kin if k < j for t in said[k])[-NEAR:]
                after = tuple(t for k in kin if k > j for t in said[k])[:NEAR]
                sentences.append(_Sentence(text, i, frozenset().union(*tokens), squash(text), quotes, tokens, before, after))
        item_words: list[set[str]] = [set() for _ in evidence]
        for sentence in sentences:
            item_words[sentence.item] |= sentence.words
        found = set().union(*item_words) if item_words else set()
        claim = self._claim(question, found)
        # words no evidence item holds cannot tell the items apart, they only lower every item's
        # share alike ('What usually happens …', 'first thing …'); where the question names a
        # time, the items at that time are the ones to tell apart: a word only the others hold
        # ('lunch', said of another day's) would draw the answer to them
        placing = placing_clause(question)
        position = time_position(question)
        # Only before or after: what happens during a happening the items that hold it tell of
        # themselves, and a happening that recurs (a chat with the same two people) would
        # narrow the evidence to every occasion of it. Not with an end of the timeline either
        # ("after the last time I cut fruit"): which occasion is the last, the one in progress
        # or the one before it, the words do not say.
        placed = None
        if placing is not None and placing.relation != "during" and position is None \
                and (happening := self._claim(placing.text, found) & found):
            anchors = np.array([happening <= w for w in item_words], bool)
            if anchors.any() and not anchors.all():
                placed = (placing.relation, anchors)
        timing = self._timing(question, evidence, now, placed)
        asked = claim & set().union(*(w for w, fit in zip(item_words, _where_named(timing.fits)) if fit))
        beside = None
        if placed is not None:
            if timing.moment is None:  # where something was right after it is where it was last put by then
                beside = _beside(placing.relation, placed[1], evidence, item_words)
            # the happening it is before or after is not what is asked
            asked, claim = (asked - happening) or asked, (claim - happening) or claim
        item_cover = np.array([len(asked & w) / len(asked) if asked else 1.0 for w in item_words])
        core = (asked - {_held(w, asked, noun_lemmas(question)) for w in modifier_words(question)}) or asked
        core_cover = np.array([len(core & w) / len(core) if core else 1.0 for w in item_words])
        best = item_cover.max() if len(item_cover) else 0.0
        # an item that holds the happening is about it, whether or not it names what picks out its thing
        about = ((item_cover >= min(0.5, best)) & (item_cover > 0)) | (core_cover >= 1.0) if asked \
            else np.ones(len(evidence), bool)
        weight = self._weights(question, evidence, about, core_cover >= 1.0, timing, now)
        if beside is not None:
            weight = np.where(beside > 0, beside, np.where(beside < 0, 0.0, weight * OFF_CUE))
        share = np.array([_share(asked, s.words, item_words[s.item]) for s in sentences])
        support = (0.3 + 0.7 * share) * np.array([weight[s.item] for s in sentences]) if sentences else np.zeros(0)
        actor = question_actor(question) if question_intent(question) != "who" else None
        return _Read(sentences, support, share, item_words, weight, item_cover, asked, core, core_cover,
                     position is not None, claim, timing.fits, beside, None if actor == "we" else actor,
                     [(a, b) for a, b in timing.stretches if b > a])

    # ------------------------------------------------------------ options

    def totals(
        self, question: str, options: Sequence[str], evidence: Sequence[Evidence], now: float | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """(total score, semantic score) per option; `now`: the query time (corpus seconds)."""
        options = [strip_label(o) for o in options]
        read = self._read(question, evidence, now)
        sentences, support = read.sentences, read.support
        lexical = np.zeros(len(options))
        if not sentences:
            vectors = self.embedder.embed([question, *options])
            semantic = vectors[1:] @ vectors[0]
            return SEMANTIC_WEIGHT * (semantic - semantic.mean()), semantic
        common = set.intersection(*(set(self._content(o)) for o in options)) if len(options) > 1 else set()
        held = set().union(*(w for w, weight in zip(read.item_words, read.weight) if weight > 0))
        for k, option in enumerate(options):
            best: dict[int, float] = {}
            for item, value in self._supports(read, option, common):
                best[item] = max(best.get(item, 0.0), value)
            wanted = self._option_words(option, common)
            nouns = noun_lemmas(option)
            share = sum(_held(w, held, nouns) in held for w in wanted) / max(len(wanted), 1)
            lexical[k] = (UNHELD + (1.0 - UNHELD) * share) * sum(
                w * v for w, v in zip(AGREEMENT, sorted(best.values(), reverse=True)))
        ranges = [option_range(o) for o in options]
        amounts = [option_seconds(o) for o in options]
        unit = counted_unit(question)
        numbers = [option_number(o) for o in options]
        places = [recording_window(o) for o in options]
        if unit is not None and None not in numbers and counts_into(question):  # "how many minutes into the video?"
            places = [recording_window(f"{n} {unit}s into the video") for n in numbers]
        elif not all(amounts) and unit is not None and all(n is not None and n > 0 for n in numbers):
            amounts = [n * unit_seconds(unit) for n in numbers]  # "how many minutes?" "4"
        intent = question_intent(question)
        listed = asks_sequence(question)  # "in what order …?": options may list happenings between commas
        relative = intent == "when" or all("ago" in words(o) for o in options)
        polarity = [_polarity(o) for o in options]
        if read.claim and set(polarity) == {True, False}:  # "Did I bake a cake?" "Yes" / "No"
            said = _claimed(read)
            lexical = np.array([1.0 if p == said else 0.0 for p in polarity])
        elif asks_summary(question):
            lexical = self._footage(options, read, evidence, common)
        elif unit == "day" and None not in numbers and (days := _days_recorded(read, evidence)):
            lexical = np.array([1.0 if n == days else 0.0 for n in numbers])
        elif intent != "count" and all(ranges):
            lexical = np.array([self._overlap(r, evidence, read.weight * read.cover) for r in ranges])
        elif intent != "count" and all(places):
            runs = _runs(evidence, read.weight * _most_about(read), read.core)
            clocks = [CLOCK.search(o) for o in options]
            hours = [of_day(c.group(), [a for a, _ in places], evidence) if c else [] for c in clocks]  # type: ignore[misc]
            if all(hours):  # times of day ("around 10:30" in a day's footage): compared on the clock
                places = [(h[0] % DAY, h[0] % DAY) for h in hours]
                runs = [(Span(span.t_start % DAY, span.t_start % DAY + span.duration, span.text), w) for span, w in runs]
            lexical = self._placed(places, runs)  # type: ignore[arg-type]
        elif all(amounts) and not relative and first_to_last(question) \
                and (spanned := _first_to_last(evidence, read)) is not None:
            lexical = _fit(spanned, amounts)
        elif all(amounts) and not relative and (gap := self._between(question, amounts, evidence, read)) is not None:
            lexical = gap
        elif all(amounts) and not relative and (away := _absence(question, read, evidence)) is not None:
            lexical = _fit(away, amounts)
        elif all(amounts) and (now is not None or not relative):
            runs = _runs(evidence, read.weight * _most_about(read), read.core)
            lexical = self._elapsed(amounts, runs, now if relative else None)  # type: ignore[arg-type]
        elif intent != "count" and (days := option_days(options, now)) is not None:
            on = self._dated([d for d in days if not isinstance(d, str)], evidence, read.weight * _most_about(read),
                             read.core, now if now is not None else float("inf"))
            lexical = _which_day(days, on, asks_negated(question))
        elif intent != "count" and now is not None \
                and all(windows := [relative_window(o, now) or ago_window(o, now) for o in options]):
            lexical = self._dated(windows, evidence, read.weight * _most_about(read), read.core, now)  # type: ignore[arg-type]
        elif intent == "count" and None not in numbers \
                and (thing := counted_thing(question)) and (stated := _stated(thing, read, numbers)) is not None:
            lexical = stated
        elif intent == "count" and None not in numbers:
            # a count a memory computed is over all of its history, not the time the question names
            named = _where_named(read.fits)
            moved = moved_thing(question)
            count = (_people(question, read, evidence) if counts_people(question) else None) \
                or (_moves(moved[1], read, evidence, named) if moved and moved[0] not in read.found else None) \
                or (self._counted(question, read, evidence) if named.all() else None) \
                or self._moments(read.asked, self._timed_moments(question, evidence, now), read.cover * named)
            if count:
                lexical = np.array([1.0 if n == count else 0.0 for n in numbers])
        elif intent == "who" and asks_about_speech(question):
            speakers = self._speakers(question, options, evidence, read.weight)
            if speakers.any():
                lexical = speakers
        elif intent != "count" and asks_every_day(question) \
                and (daily := self._daily(options, read, evidence, common)) is not None:
            lexical = daily
        elif (most := frequency_extreme(question)) is not None \
                and (frequency := self._frequency(most, options, read, self._timed_moments(question, evidence, now),
                                                  common)) is not None:
            lexical = frequency
        elif (extreme := duration_extreme(question)) is not None \
                and (lasted := self._lasted(extreme, options, evidence)) is not None:
            lexical = lasted
        elif intent != "count" and min(map(len, sequences := [_steps(o, listed) for o in options])) > 1 \
                and (followed := self._followed(sequences, evidence)) is not None:
            lexical = followed
        elif intent == "order" or ((position := time_position(question)) is not None and position.sequence):
            ordered = self._ordered(question, options, evidence)
            if ordered is not None:
                lexical = ordered
        vectors = self.embedder.embed([*options, *(s.text for s in sentences)])
        semantic = (vectors[: len(options)] @ vectors[len(options) :].T * support[None, :]).max(axis=1)
        mine = np.array([_first_person(o) for o in options])
        if mine.any() and not mine.all():
            # "Me" embeds as a pronoun, near no sentence that says what "I" did: it is told by
            # its words alone, at the other options' mean closeness
            semantic = np.where(mine, semantic[~mine].mean(), semantic)
        return lexical + SEMANTIC_WEIGHT * (semantic - semantic.mean()), semantic

    def choose(self, question: str, options: Sequence[str], evidence: Sequence[Evidence], now: float | None = None) -> int:
        """Index of the best-supported option."""
        total, semantic = self.totals(question, options, evidence, now)
        return min(range(len(options)), key=lambda k: (-round(float(total[k]), 9), -float(semantic[k]), k))

    def margin(self, question: str, options: Sequence[str], evidence: Sequence[Evidence]) -> float:
        """How far the best option leads the runner-up (infinite with fewer than two options)."""
        if len(options) < 2:
            return float("inf")
        total = np.sort(self.totals(question, options, evidence)[0])
        return float(total[-1] - total[-2])

    def mentions(self, option: str, options: Sequence[str], text: str) -> bool:
        """Whether `text` holds all of the option's distinguishing words other than place words
        (or the whole option, letters and digits only)."""
        option = strip_label(option)
        found, nouns = forms(text), noun_lemmas(option)
        return all(_held(w, found, nouns) in found for w in self._distinct(option, options)) \
            or (len(squash(option)) >= 3 and squash(option) in squash(text))

    def _distinct(self, option: str, options: Sequence[str]) -> set[str]:
        """The option's words that tell it from the others, place words and parts of the day
        aside unless that is all it has ("lunch at midday": the text shows lunch, its time says
        midday)."""
        option = strip_label(option)
        common = set.intersection(*(set(self._content(strip_label(o))) for o in options)) if len(options) > 1 else set()
        distinct = {w for w in self._content(option) if w not in common}
        return {w for w in distinct if w not in PLACE_WORDS and w not in PERIODS} or distinct or set(lemmas(option)) - common

    def unheard(self, question: str, options: Sequence[str], evidence: Sequence[Evidence]) -> list[Evidence]:
        """The evidence items that hold untranscribed speech, when the question asks what was said
        and no item holds the distinguishing words of any option (then no option can be told);
        else []. Words count as whole words only: a name's letters run together across words
        ('corNer ORAnge') or a number's digits inside a clock time ('08:35:30') name nothing."""
        if not asks_about_speech(question):
            return []
        held = [forms(e.text) for e in evidence]
        if any(self._distinct(option, options) <= found for option in options for found in held):
            return []
        return [e for e in evidence if any(not line.transcribed for line in e.speech)]

    def _option_words(self, option: str, common: set[str]) -> list[str]:
        """The option's words that the scorer looks for: its content words that not every option
        has (all its words that not every option has, when it has no content word of its own)."""
        distinct = [w for w in dict.fromkeys(self._content(option)) if w not in common]
        return distinct or [w for w in dict.fromkeys(lemmas(option)) if w not in common]

    def _held_words(self, option: str, found: AbstractSet[str], common: set[str]) -> set[str]:
        """The option's distinguishing words, each in the form the evidence holds it (`_held`)."""
        nouns = noun_lemmas(option)
        return {_held(w, found, nouns) for w in self._option_words(option, common)}

    def _supports(self, read: _Read, option: str, common: set[str]) -> Iterator[tuple[int, float]]:
        """(item, support) of the option by each sentence: weight × (0.3 + 0.7 × relevance) ×
        coverage, where relevance is the share of the question's content words within `NEAR`
        words of the option's own (a glossed 30-s caption is one long sentence; a name twenty
        words from the question's verb is not who did it), or `SENTENCE_SHARE` × the whole
        sentence's share, whichever is larger; for a colour option, divided by the number of
        colours the sentence names; times `UNRELATED` for an item that holds none of the
        question's words the evidence holds. The option's own words are no part of the
        question's here: for "which room …?", "room" in a sentence says nothing for "living
        room" that it does not say for "garden"."""
        distinct = self._option_words(option, common)
        wanted = set(distinct)
        asked = read.asked - wanted
        colour = names_colour(wanted)
        nouns = noun_lemmas(option)
        wanted |= {root(w) for w in wanted & nouns}  # as `_held` finds them
        for j, sentence in enumerate(read.sentences):
            coverage = self._coverage(option, distinct, nouns, sentence)
            if not coverage:
                continue
            if read.actor is not None and _done_by_others(read.actor, wanted, sentence.text):
                coverage *= MISATTRIBUTED
            if colour and not _said_of(wanted, asked, sentence):
                # a sentence that names several colours ("the main colours are purple, white
                # and black") says less of each than one that names a thing's one colour
                coverage /= max(1, len(COLOURS & sentence.words))
            if not asked:
                share = read.share[j]
            else:
                share = _share(asked, sentence.words, read.item_words[sentence.item])
                at = [i for i, token in enumerate(sentence.tokens) if token & wanted]
                if at:
                    near = frozenset().union(*(t for i in at for t in sentence.tokens[max(0, i - NEAR) : i + NEAR + 1]))
                    around = sentence.before + sentence.tokens + sentence.after
                    at = [i + len(sentence.before) for i in at]
                    beside = frozenset().union(*(t for i in at for t in around[max(0, i - NEAR) : i + NEAR + 1])) - near
                    # a word of the next sentence is nearer than the rest of the item, not as near as one of its own
                    found = len(asked & near) + NEIGHBOUR * len((asked - near) & beside)
                    share = max(found / len(asked), SENTENCE_SHARE * share)
            unrelated = UNRELATED if read.asked and not read.cover[sentence.item] else 1.0
            yield sentence.item, float(read.weight[sentence.item]) * (0.3 + 0.7 * share) * coverage * unrelated

    def _coverage(self, option: str, distinct: list[str], nouns: frozenset[str], sentence: _Sentence) -> float:
        weights = {w: 0.5 if w in PLACE_WORDS else 1.0 for w in distinct}
        total = sum(weights.values())
        score = sum(weights[w] for w in distinct if _held(w, sentence.words, nouns) in sentence.words) / total if total else 0.0
        whole = squash(_ARTICLE.sub("", option))  # "A sponge" is as much in "the sponge" as "A hose" in "the hose"
        if _first_person(option):  # "Me" is whole where the sentence says "I", as a name is where it names them
            return score + 0.5 * bool(sentence.words & FIRST_PERSON)
        if len(whole) >= 3 and whole in sentence.squashed:
            score += 0.5
            if whole in sentence.quotes:
                score += 0.5
        return score

    def _footage(self, options: Sequence[str], read: _Read, evidence: Sequence[Evidence], common: set[str]) -> np.ndarray:
        """For a question that asks what a stretch was mostly about (`intent.asks_summary`): per
        option, the share of the footage of the items at the time the question names that its
        parts explain, times the share of its parts found there. An option lists the stretch's
        happenings ("mowing the lawn, watering the roses, grilling corn"; its parts between
        commas and "and", `_steps`); an item is explained as far as it holds the words of one
        part (a window that tells of an hour counts for the hour, a clip that says a part
        exactly for its 30 s), and a part is found as far as its best item holds it. Read word by
        word over the whole option, a list of four happenings was covered by a quarter in each
        window and lost to a shorter option sharing the longest one ("mowing the lawn and a
        nap"), whose other part the stretch never showed. Where the question names a time, each
        word counts by how much more of the footage holding it lies there than elsewhere: the
        video's topic ("the mussels", in every part) does not tell its last part from its first.
        Where it names a stretch of the clock ("between minute 21 and minute 26"), an item's
        footage there is the part of its range inside the stretch, and the footage holding a
        word is that of the item's intervals whose text holds it (`Evidence.intervals`: a 10-min
        window that overlaps the stretch tells of minute 28 in the finer caption of minutes 27
        to 30, which lies outside)."""
        seconds = np.array([max(e.t_end - e.t_start, 0.0) for e in evidence])
        inside = seconds * _where_named(read.fits)
        within = read.stretches and (clipped := np.array([_inside_s(e, read.stretches) for e in evidence])).any()
        if within:
            inside = clipped
        total = inside.sum()
        out = np.zeros(len(options))
        if total <= 0:
            return out
        span_words: dict[int, list[tuple[Span, set[str]]]] = {}
        for k, option in enumerate(options):
            distinct, nouns = self._option_words(option, common), noun_lemmas(option)
            holding = {w: np.array([_held(w, said, nouns) in said for said in read.item_words]) for w in distinct}
            # per word: the share of its footage inside over the share of all footage inside
            tell = {}
            for w, held in holding.items():
                if within:
                    footage = [self._footage_of(_held(w, read.item_words[i], nouns), evidence[i], read.stretches, span_words, i)
                               for i in np.flatnonzero(held)]
                    tell[w] = sum(b for _, b in footage) / max(sum(a for a, _ in footage), 1e-9)
                else:
                    tell[w] = float((inside * held).sum() / max((seconds * held).sum(), 1e-9))
            parts = [p for part in _steps(option, listed=True)
                     if (p := [w for w in dict.fromkeys(self._content(part)) if w in holding])] or [distinct]
            held = np.array([[sum(tell[w] for w in part if holding[w][i]) / max(len(part), 1)
                              for i in range(len(evidence))] for part in parts])
            explained = float((held.max(axis=0) * inside).sum() / total)
            out[k] = explained * float((held * (inside > 0)[None, :]).max(axis=1).mean())
        return out

    @staticmethod
    def _footage_of(word: str, item: Evidence, stretches: list[tuple[float, float]],
                    cache: dict[int, list[tuple[Span, set[str]]]], key: int) -> tuple[float, float]:
        """(seconds, seconds inside the stretches) of the item's footage that holds the word:
        its intervals whose text holds it, or its whole range when none does (the word is the
        window's own summary's)."""
        if key not in cache:
            cache[key] = [(span, set().union(*word_forms(span.text))) for span in item.intervals]
        parts = [span for span, said in cache[key] if word in said] or [Span(item.t_start, item.t_end, item.text)]
        return (sum(max(p.t_end - p.t_start, 0.0) for p in parts),
                sum(_inside_s(p, stretches) for p in parts))

    def _ordered(self, question: str, options: Sequence[str], evidence: Sequence[Evidence]) -> np.ndarray | None:
        """For a question weighing happenings in time: 1 for the option whose happening the
        evidence records first (last, when the question asks for the later one; the nth from
        that end for an ordinal, "which did I do second?", `TimePosition.nth`), 0 for the others;
        None unless two options, and that many, are found at different times. An option is found at the
        start of the earliest evidence interval (`Evidence.spans`: a timeline run, a window's
        finer caption) whose text names it, or, when none does (the option says it in other
        words: "Bob dropping by" for "BOB COMES TO VISIT"), whose text is closest in meaning to
        it of all the options (`_closest_spans`)."""
        spans = [span for e in evidence for span in e.spans()]
        found = self._first_named(options, spans)
        if None in found:
            for k, start in self._closest_spans(options, spans).items():
                if found[k] is None:
                    found[k] = start
        times = sorted({t for t in found if t is not None}, reverse=asks_later(question))
        position = time_position(question)
        nth = position.nth if position is not None else 1
        if len(times) < max(2, nth):
            return None
        target = times[nth - 1]
        if found.count(target) > 1:
            return None
        return np.array([1.0 if t == target else 0.0 for t in found])

    def _first_named(self, names: Sequence[str], spans: Sequence[Span]) -> list[float | None]:
        """Per name (an option, a listed happening): the start of the earliest interval whose text
        names it by its words that tell it from the other names (`mentions`), None where none does."""
        found: list[float | None] = []
        for name in names:
            starts = [span.t_start for span in spans if self.mentions(name, names, span.text)]
            found.append(min(starts) if starts else None)
        return found

    def _lasted(self, extreme: Extreme, options: Sequence[str], evidence: Sequence[Evidence]) -> np.ndarray | None:
        """For a question asking which happening took the most (least) time: 1 for the option
        whose happening lasted longest (shortest), 0 for the others; None unless two options are
        found and one of them is the only one at that extreme. An option lasts the runs (`_runs`)
        of the evidence intervals whose text names it: one activity in three consecutive clips
        lasted as long as the three; its longest run, or their sum when time spent is added up
        (`Extreme.total`), the other measure breaking a tie."""
        measured: list[tuple[float, float]] = []
        for option in options:
            named = np.array([float(any(self.mentions(option, options, s.text) for s in e.spans())) for e in evidence])
            runs = [span.duration for span, _ in _runs(evidence, named, self._distinct(option, options))] or [0.0]
            measured.append((sum(runs), max(runs)) if extreme.total else (max(runs), sum(runs)))
        found = [m for m in measured if m[0] > 0]
        if len(found) < 2:
            return None
        target = max(found) if extreme.longest else min(found)
        if measured.count(target) > 1:
            return None
        return np.array([1.0 if m == target else 0.0 for m in measured])

    def _followed(self, sequences: Sequence[list[str]], evidence: Sequence[Evidence]) -> np.ndarray | None:
        """For options that each list happenings in an order ("sanding the chair, then sweeping
        the floor"): per option, the share of its consecutive pairs that the evidence records in
        that order, each happening found at the start of the earliest interval that names it
        (`Evidence.spans`, by its words that tell it from the other options' happenings); None
        unless some option's every happening is found and in its order."""
        spans = [span for e in evidence for span in e.spans()]
        steps = list(dict.fromkeys(step for sequence in sequences for step in sequence))
        found = dict(zip(steps, self._first_named(steps, spans)))
        out = np.zeros(len(sequences))
        for k, sequence in enumerate(sequences):
            times = [found[step] for step in sequence]
            if None in times:
                continue
            out[k] = sum(a < b for a, b in zip(times, times[1:])) / (len(times) - 1)  # type: ignore[operator]
        return out if (out >= 1.0).any() else None

    def _closest_spans(self, options: Sequence[str], spans: Sequence[Span]) -> dict[int, float]:
        """Option index → the start of the earliest interval whose text is closest in meaning
        (MiniLM cosine) to that option of all the options, by at least `MEANING_MARGIN`, and at
        least `MEANING_FLOOR` close."""
        texts = list(dict.fromkeys(span.text for span in spans))
        if not texts or len(options) < 2:
            return {}
        vectors = unit_rows(self.embedder.embed([*options, *texts]))
        cosine = vectors[: len(options)] @ vectors[len(options) :].T
        ranked = np.sort(cosine, axis=0)
        best = cosine.argmax(axis=0)
        closest = {text: int(best[j]) for j, text in enumerate(texts)
                   if ranked[-1, j] >= MEANING_FLOOR and ranked[-1, j] - ranked[-2, j] >= MEANING_MARGIN}
        out: dict[int, float] = {}
        for span in spans:
            k = closest.get(span.text)
            if k is not None:
                out[k] = min(out.get(k, span.t_start), span.t_start)
        return out

    def _counted(self, question: str, read: _Read, evidence: Sequence[Evidence]) -> int | None:
        """A count a memory computed (`Evidence.counts`) for the event the question asks about:
        one named by all of the question's content words and by nothing the question does not
        say ("keys", not "keys state on the garage shelf", for how often the keys were put
        down), from the best-weighted item that carries one; None without."""
        if not read.asked:
            return None
        said = forms(question)
        for i in sorted(range(len(evidence)), key=lambda i: (-read.weight[i], i)):
            for count in evidence[i].counts:
                if count.n > 0 and read.asked <= forms(count.what) and set(self._content(count.what)) <= said:
                    return count.n
        return None

    def _speakers(self, question: str, options: Sequence[str], evidence: Sequence[Evidence], weight: np.ndarray) -> np.ndarray:
        """Per option: how well the transcript lines of the speaker it names match what the
        question says was said (the share of its content words, speech verbs aside, in the
        line), times the line's item weight; zeros when no line both matches and has a speaker
        some option names."""
        asked = {w for w in self._content(question) if w not in SPEECH_CUES and w not in _CUES}
        # what was said, not when: "while I was fixing the bangle, who said it was not jade?"
        # is told by the line that says "jade", not by one that says the bangle broke
        asked = (asked & what_was_said(question)) or asked
        out = np.zeros(len(options))
        if not asked:
            return out
        named = [set(words(o)) - self.stop for o in options]
        for e, w in zip(evidence, weight):
            for line in e.speech:
                if not (line.speaker and line.transcribed):
                    continue
                match = len(asked & forms(line.text)) / len(asked)
                who = set(words(line.speaker))
                for k, names in enumerate(named):
                    if names and (who <= names or names <= who):
                        out[k] = max(out[k], w * match)
        return out

    def _moments(self, asked: set[str], evidence: Sequence[Evidence], item_cover: np.ndarray) -> int:
        """Separate moments the asked-about thing is shown: the intervals of evidence items that
        hold all of the question's content words (`Evidence.spans`), and the typed moments an
        item carries (an object's sightings, `Evidence.moments`) whose record holds them all.
        Moments that touch in time are one (an event spans several clips)."""
        spans = [(clock_of(e.video_id), s.t_start, s.t_end) for e, c in zip(evidence, item_cover) if c >= 1.0
                 for s in _about(e, asked)]
        for e in evidence:
            spans += [(clock_of(e.video_id), start, end) for start, end, text in e.moments if asked and asked <= forms(text)]
        count, last = 0, None
        for video, start, end in sorted(spans):
            if last is None or video != last[0] or start > last[1] + TOUCH:
                count += 1
                last = (video, end)
            else:
                last = (video, max(last[1], end))
        return count

    def _timed_moments(self, question: str, evidence: Sequence[Evidence], now: float | None) -> list[Evidence]:
        """The evidence with only those of its typed moments (`Evidence.moments`) that lie at
        the time the question names, each judged by `_timing` as an item of its own among the
        others: a fact seen on three mornings is seen on one of them "on the second day"."""
        moments = [(i, m) for i, e in enumerate(evidence) for m in e.moments]
        if not moments:
            return list(evidence)
        apart = [Evidence(start, end, text, evidence[i].source, evidence[i].score, evidence[i].video_id)
                 for i, (start, end, text) in moments]
        fits = self._timing(question, [*evidence, *apart], now).fits[len(evidence):]
        kept: dict[int, list[tuple[float, float, str]]] = {i: [] for i in range(len(evidence))}
        for (i, moment), fit in zip(moments, fits):
            if fit:
                kept[i].append(moment)
        return [replace(e, moments=tuple(kept[i])) if e.moments else e for i, e in enumerate(evidence)]

    def _frequency(
        self, most: bool, options: Sequence[str], read: _Read, evidence: Sequence[Evidence], common: set[str]
    ) -> np.ndarray | None:
        """For a question that asks which happening came most (`most`) or least often
        (`intent.frequency_extreme`): per option, how many separate moments the evidence shows it
        (`_moments` of the items that hold all its distinguishing words), or the count a memory
        computed for it (`Evidence.counts`) where that is more, against the most found (or, for
        the least, the fewest found against its own). None when no option is found at all."""
        found = read.found
        counts = []
        for option in options:
            wanted = self._held_words(option, found, common)
            if not wanted:
                counts.append(0)
                continue
            cover = np.array([len(wanted & w) / len(wanted) for w in read.item_words])
            typed = max((c.n for e in evidence for c in e.counts if wanted <= forms(c.what)), default=0)
            counts.append(max(self._moments(wanted, evidence, cover), typed))
        seen = np.array(counts, float)
        if not seen.any():
            return None
        if most:
            return seen / seen.max()
        return np.where(seen > 0, seen[seen > 0].min() / np.maximum(seen, 1.0), 0.0)

    def _daily(self, options: Sequence[str], read: _Read, evidence: Sequence[Evidence], common: set[str]) -> np.ndarray | None:
        """For a question that asks what happened on every day (`intent.asks_every_day`): per
        option, on how many days of the recording the evidence shows it (the days of the items
        shorter than a day that hold all its distinguishing words, and of the typed moments
        whose record holds them), against the most days any option is shown on. A habit is told
        by the days it comes back on, not by how often it was seen on one of them. None when no
        option is found at all."""
        found = read.found
        days = []
        for option in options:
            wanted = self._held_words(option, found, common)
            on: set[tuple[str, int]] = set()
            if wanted:
                for item, words in zip(evidence, read.item_words):
                    clock = clock_of(item.video_id)
                    if wanted <= words and item.t_end - item.t_start < DAY:
                        on.add((clock, int((item.t_start + item.t_end) / 2 // DAY)))
                    on |= {(clock, int((start + end) / 2 // DAY)) for start, end, text in item.moments
                           if wanted <= forms(text)}
            days.append(len(on))
        shown = np.array(days, float)
        return shown / shown.max() if shown.any() else None

    def _between(
        self, question: str, amounts: Sequence[float], evidence: Sequence[Evidence], read: _Read
    ) -> np.ndarray | None:
        """For a question about the time between two happenings ("how long between my lunch and
        the walk?", `intent.between_phrases`): per option, how close its amount is to the time
        from the start of one happening's run of evidence (`_runs`, on the items most about its
        words) to the other's, times the two runs' weights, best pair first. The split of the
        words at an "and" whose two runs weigh most is taken. None when no split finds both."""
        found = read.found
        best: tuple[float, np.ndarray] | None = None
        for phrases in between_phrases(question):
            runs = []
            for phrase in phrases:
                asked = {w for w in self._content(phrase) if w in found and w not in _CUES and w not in PLACE_WORDS}
                if not asked:
                    break
                cover = np.array([len(asked & w) / len(asked) for w in read.item_words])
                most = (cover >= cover.max() - 1e-9) & (cover > 0)
                ranked = sorted(_runs(evidence, read.weight * most, asked), key=lambda r: -r[1])[:GAP_RUNS]
                if not ranked:
                    break
                runs.append(ranked)
            if len(runs) < 2:
                continue
            out = np.zeros(len(amounts))
            for a, wa in runs[0]:
                for b, wb in runs[1]:
                    measured = abs(b.t_start - a.t_start)
                    if measured > 0:
                        out = np.maximum(out, wa * wb * _fit(measured, amounts))
            weight = runs[0][0][1] * runs[1][0][1]
            if best is None or weight > best[0]:
                best = (weight, out)
        return best[1] if best is not None else None

    @staticmethod
    def _elapsed(amounts: Sequence[float], runs: Sequence[tuple[Span, float]], now: float | None) -> np.ndarray:
        """Per option: how close its amount of time is to the one measured on the best-weighted
        run of evidence about the question (`_runs`): the time since its midpoint up to `now`,
        its duration when `now` is None."""
        out = np.zeros(len(amounts))
        for span, w in runs:
            measured = now - (span.t_start + span.t_end) / 2 if now is not None else span.duration
            if measured > 0:
                out = np.maximum(out, w * _fit(measured, amounts))
        return out

    @staticmethod
    def _placed(places: Sequence[tuple[float, float]], runs: Sequence[tuple[Span, float]]) -> np.ndarray:
        """Per option: how well the midpoint of the best-weighted run of evidence about the
        question (`_runs`) falls in the stretch of the recording it names
        (`position.recording_window`), distances counted in units of the options' spacing."""
        centres = sorted({(a + b) / 2 for a, b in places})
        scale = min((b - a for a, b in zip(centres, centres[1:])), default=60.0)
        out = np.zeros(len(places))
        for span, w in runs:
            middle = (span.t_start + span.t_end) / 2
            out = np.maximum(out, [w * closeness(middle, place, scale) for place in places])
        return out

    @staticmethod
    def _dated(
        windows: Sequence[tuple[float, float]],
        evidence: Sequence[Evidence],
        weight: np.ndarray,
        asked: set[str],
        now: float,
    ) -> np.ndarray:
        """Per option: how well the midpoints of the best-weighted evidence's intervals about the
        question (`_about`) fall in the stretch of time it names (`daytime.closeness`). A moment
        less than `PRESENT_S` before `now` is the occasion the question is asked on, not an
        earlier one it asks about ("when did I last use the knife?", asked holding it)."""
        out = np.zeros(len(windows))
        for e, w in zip(evidence, weight):
            for span in _about(e, asked) if w > 0 else ():
                middle = (span.t_start + span.t_end) / 2
                if middle > now - PRESENT_S:
                    continue
                out = np.maximum(out, [w * closeness(middle, window) for window in windows])
        return out

    @staticmethod
    def _overlap(span: tuple[float, float], evidence: Sequence[Evidence], weight: np.ndarray) -> float:
        best = 0.0
        for e, w in zip(evidence, weight):
            inter = min(span[1], e.t_end) - max(span[0], e.t_start)
            if inter > 0:
                union = max(span[1], e.t_end) - min(span[0], e.t_start)
                best = max(best, w * inter / union)
        return best

    # ------------------------------------------------------------ free form

    def best_sentence(self, question: str, evidence: Sequence[Evidence]) -> str | None:
        """For free-form questions: the evidence sentence closest to the question, in words and
        meaning (support × (1 + cosine)).

        Sentences are embedded in order of support, a chunk at a time, and only while one could
        still win: a cosine is at most 1, so a sentence whose doubled support is below the best
        score so far never can. The answer is the exhaustive argmax's (earliest sentence on a
        tie), but a long evidence list costs a few embedding calls, not one per sentence."""
        read = self._read(question, evidence)
        support = read.support
        candidates = np.arange(len(read.sentences))
        if COLOUR_WORDS & set(lemmas(question)):
            named = np.array([len(COLOURS & s.words) for s in read.sentences])
            if named.any():
                candidates = candidates[named > 0]
                # as for options: a sentence naming one thing's colour over a list of colours
                support = support / np.maximum(named, 1)
        if not len(candidates):
            return None
        order = candidates[np.argsort(-support[candidates], kind="stable")]
        query = self.embedder.embed([question])[0]
        best, best_score = -1, -np.inf
        for start in range(0, len(order), BEST_SENTENCE_CHUNK):
            chunk = order[start : start + BEST_SENTENCE_CHUNK]
            if 2.0 * support[chunk[0]] < best_score:
                break
            scores = support[chunk] * (1.0 + self.embedder.embed([read.sentences[i].text for i in chunk]) @ query)
            for i, score in zip(chunk, scores):
                if score > best_score or (score == best_score and i < best):
                    best, best_score = int(i), float(score)
        return read.sentences[best].text


def _stated(thing: str, read: _Read, numbers: Sequence[int | None]) -> np.ndarray | None:
    """Per option number, how well the evidence says that many of the counted thing ("I took
    four hangers", "we bought 5 pairs in total"): the best support of a sentence that puts the
    number before the thing's word (at most `STATED_REACH` words before it: "four power banks"),
    relative to the best option's; None when no sentence states any option's number. A count
    said is the count: counting the moments the thing is seen counts how often it was handled."""
    said: dict[int, float] = {}
    for sentence, support in zip(read.sentences, read.support):
        if support <= 0:
            continue
        for j, word in enumerate(sentence.tokens):
            if thing in word:
                for before in reversed(sentence.tokens[max(0, j - STATED_REACH) : j]):
                    if (n := _number_in(before)) is not None:
                        said[n] = max(said.get(n, 0.0), float(support))
                        break
    best = max((said.get(n, 0.0) for n in numbers if n is not None), default=0.0)
    return np.array([said.get(n, 0.0) / best if n is not None else 0.0 for n in numbers]) if best > 0 else None


def _number_in(word: AbstractSet[str]) -> int | None:
    """The count a word's forms name ("4", "four"), if any."""
    for form in word:
        if form.isdigit():
            return int(form)
        if form in NUMBERS:
            return NUMBERS[form]
    return None


def _people(question: str, read: _Read, evidence: Sequence[Evidence]) -> int | None:
    """How many people the question counts ("how many people had lunch with me?"): those named
    (`nlp.person_names`, or speaking) in the best-weighted item that holds the happening, but
    for the ones the question names itself. The camera's wearer is one of them where the item
    says "I" and the question does not: "with me", "did I see" count the others, "how many of
    us" counts the wearer too. None when no item holds the happening (or no word of it is
    held anywhere) or names anyone."""
    holders = [i for i in range(len(evidence)) if read.core_cover[i] >= 1.0]
    if not read.core or not holders:
        return None
    item = evidence[min(holders, key=lambda i: (-read.weight[i], i))]
    said = set(words(question))
    named = set(words(item.text)) | _speakers([item])
    people = (named & (person_names([e.text for e in evidence]) | _speakers(evidence))) - said
    wearer = bool(named & FIRST_PERSON) and (bool(said & _WE) or not said & FIRST_PERSON)
    return len(people) + wearer or None


def _moves(thing: str, read: _Read, evidence: Sequence[Evidence], named: np.ndarray) -> int | None:
    """How many times a thing was moved, where no evidence says the moving itself
    (`intent.moved_thing`: "how many times did I move the keys on DAY2?" over "keys in the blue
    drawer", later "keys in the red basket"): how often the place said of it (`nlp.places_of`)
    changed at the time the question names (`named`), from the place said before on the same
    clock. An item that says one place for it is a sighting at its midpoint; a place said more
    or less fully ("the drawer", "the blue drawer") is the same place; the first place said is
    where it was, not a move. None when no place said there differs from the one before."""
    sightings = []
    for i, item in enumerate(evidence):
        places = set().union(*(places_of(thing, s.text) for s in read.sentences if s.item == i and thing in s.words))
        if len(places) == 1:
            sightings.append((clock_of(item.video_id), (item.t_start + item.t_end) / 2, i, places.pop()))
    moves, last = 0, {}
    for clock, _, i, place in sorted(sightings, key=lambda s: s[:2]):
        before = last.get(clock)
        if before is not None and not (place <= before or before <= place) and named[i]:
            moves += 1
        last[clock] = place
    return moves or None


def _speakers(evidence: Sequence[Evidence]) -> set[str]:
    """The words of the names of those who speak in the items' transcript lines."""
    return {w for e in evidence for line in e.speech if line.speaker for w in words(line.speaker)}


def _absence(question: str, read: _Read, evidence: Sequence[Evidence]) -> float | None:
    """How long who or what the question asks about was away ("how long was the grey car
    gone?", `intent.absent_words`): the longest stretch between two items of one video that
    both name it, with none naming it between (it was seen leaving, then seen again); None when
    no item names it or no such stretch lies between two that do."""
    said = absent_words(question)
    if not said:
        return None
    nouns = noun_lemmas(question)
    found = read.found
    wanted = {_held(w, found, nouns) for w in said}
    longest = None
    for clock in {clock_of(e.video_id) for e in evidence}:
        seen = sorted((e.t_start, e.t_end) for e, w in zip(evidence, read.item_words)
                      if clock_of(e.video_id) == clock and wanted <= w)
        reach = None
        for start, end in seen:
            if reach is not None and start - reach > TOUCH:
                longest = max(longest or 0.0, start - reach)
            reach = end if reach is None else max(reach, end)
    return longest


def _done_by_others(actor: str, wanted: AbstractSet[str], text: str) -> bool:
    """Whether every word of an option's in the sentence hangs from a clause whose subject
    names people and not the `actor` the question asks about (`nlp.clause_subjects`): for the
    wearer ("i"), no "I" or "we"; for a name, neither it nor a pronoun that may stand for it.
    A clause whose subject is no person says nothing either way."""
    found = [people for said, people in clause_subjects(text) if said & wanted]
    groups = [people for people in found if people is not None]
    if not found or len(groups) < len(found):
        return False
    if actor in WEARER:
        return not any(people & WEARER for people in groups)
    return not any(people & (THIRD_PERSON | {actor}) for people in groups)


def _said_of(wanted: AbstractSet[str], asked: AbstractSet[str], sentence: _Sentence) -> bool:
    """Whether a word of the option (a colour) stands right before a word of the question in
    the sentence, a shade or another colour between them: "a yellow card" says the card's
    colour, whatever other colours the sentence names for other things ("a white player")."""
    tokens = sentence.tokens
    for i, token in enumerate(tokens):
        if token & wanted:
            following = [t for t in tokens[i + 1 : i + 3] if not t & (SHADES | COLOURS)][:1]
            if following and following[0] & asked:
                return True
    return False


def _first_person(option: str) -> bool:
    """Whether an option names the camera's wearer only ("Me", "Myself", "I")."""
    said = words(option)
    return bool(said) and set(said) <= FIRST_PERSON


def _held(word: str, found: AbstractSet[str], nouns: frozenset[str]) -> str:
    """The form by which evidence words (`found`, `nlp.forms`) hold a question's or an option's
    word (`_held(w, found, nouns) in found`: whether they hold it): the word itself, or, for a
    noun they do not hold, the key it shares with words derived from its stem (`nlp.root`: the
    question's "calibration", a caption's "calibrate"; an option's "the sweeping", a caption's
    "sweeps"). Only nouns: an adverb's stem is its adjective's ("usually", "usual"), which says
    nothing of the happening."""
    return word if word in found or word not in nouns else root(word)


_STEP_BREAK = re.compile(r"\s*(?:,|;)?\s*(?:\band\s+)?\b(?:then|afterwards|followed\s+by|before|after\s+that)\b\s*|\s*(?:->|→|=>|>)\s*",
                         re.IGNORECASE)
_LIST_BREAK = re.compile(r"\s*,\s*(?:and\s+)?|\s+and\s+", re.IGNORECASE)
_STEP_OPENING = re.compile(r"^\s*(?:first(?:ly)?|at\s+first|finally|lastly)\b[\s,]*", re.IGNORECASE)


def _steps(option: str, listed: bool = False) -> list[str]:
    """The happenings an option lists in an order ("First sanding, then sweeping", "cutting →
    gluing → painting"): its parts between "then", "followed by", "before", "after that" or an
    arrow, and where the question asks for an order (`listed`, "in what order …?") between
    commas and an "and" too ("market, kitchen and terrace"); one part for an option that lists
    no order."""
    parts = [_STEP_OPENING.sub("", part).strip(" ,.;") for part in _STEP_BREAK.split(strip_label(option))]
    if listed:
        parts = [piece.strip(" ,.;") for part in parts for piece in _LIST_BREAK.split(part)]
    return [part for part in parts if part]


def _fit(measured: float, amounts: Sequence[float]) -> np.ndarray:
    """How close each amount of time is to the one measured: exp(-|ln(measured / amount)|), 1 when
    equal, a half when one is twice the other."""
    return np.exp(-np.abs(np.log(measured / np.asarray(amounts, dtype=np.float64))))


def _caption_runs(texts: Sequence[str], item: Evidence) -> list[int | None]:
    """Per sentence of an item: the run of consecutive described sentences it belongs to, None
    for a line of speech (a transcript line the item holds, or one that opens with a speaker's
    label, "Tasha: ..."). Words of neighbouring sentences are near only within a run: a speaker's
    label beside the last words of the caption says nothing of who did what."""
    lines = [squash(transcript_text((line,))) for line in item.speech]
    runs: list[int | None] = []
    run = 0
    for text in texts:
        if _LABEL.match(text) or any(squash(text) in line for line in lines):
            runs.append(None)
            run += 1
        else:
            runs.append(run)
    return runs


def _share(asked: set[str], sentence: frozenset[str], item: set[str]) -> float:
    """How much a sentence is about the question: the share of its content words (`asked`) in
    the sentence, or 0.8 × their share in its whole item (a location header and an action shown
    in one clip belong together); 1 when the question has none."""
    if not asked:
        return 1.0
    return max(len(asked & sentence), 0.8 * len(asked & item)) / len(asked)


def _most_about(read: _Read) -> np.ndarray:
    """Per evidence item, how much a time is measured on it: the items that hold as large a share
    of the words of the asked happening (`_Read.core`) as any item does, each in proportion to
    its share of all the question's words among them — unless the question asks for an end of
    the timeline, where any occurrence of the happening is one, and time ranks them. Without
    that cue the question's description picks out one occasion ("when was the kettle on the
    counter used?" is a time it stood there), with it the description only says which thing
    ("when was the kettle on the counter last used?")."""
    if not len(read.core_cover):
        return read.core_cover
    most = read.core_cover >= read.core_cover.max() - 1e-9
    if read.ranked:
        return most.astype(float)
    cover = np.where(most, read.cover, 0.0)
    return cover / cover.max() if cover.max() > 0 else most.astype(float)


def _occasions(order: Sequence[int], evidence: Sequence[Evidence]) -> list[list[int]]:
    """Items in time order (from either end) grouped into occasions: an item that overlaps or
    touches the one before it in the same video is the same occasion (one activity seen in
    consecutive clips is done once)."""
    groups: list[list[int]] = []
    for i in order:
        if groups:
            last = evidence[groups[-1][-1]]
            item = evidence[i]
            if clock_of(item.video_id) == clock_of(last.video_id) and item.t_start <= last.t_end + TOUCH and last.t_start <= item.t_end + TOUCH:
                groups[-1].append(i)
                continue
        groups.append([i])
    return groups


def _runs(evidence: Sequence[Evidence], weight: np.ndarray, asked: set[str]) -> list[tuple[Span, float]]:
    """The stretches of time the weighted evidence shows the asked-about thing in, each with the
    best weight of the items that show it: the items' intervals about the question (`_about`),
    a coarser interval left out where a finer one inside it is found (a 30-s clip bounds an
    activity, the 10-min window that holds it does not), and those that touch in time merged
    across items (an activity seen in three consecutive clips lasted as long as the three)."""
    spans = [(clock_of(e.video_id), span, float(w)) for e, w in zip(evidence, weight) if w > 0 for span in _about(e, asked)]
    finest = [
        (video, span, w) for video, span, w in spans
        if not any(v == video and inner.duration < span.duration
                   and span.t_start <= inner.t_start and inner.t_end <= span.t_end for v, inner, _ in spans)
    ]
    runs: list[tuple[str, Span, float]] = []
    for video, span, w in sorted(finest, key=lambda x: (x[0], x[1].t_start, x[1].t_end)):
        if runs and runs[-1][0] == video and span.t_start <= runs[-1][1].t_end + TOUCH:
            _, last, best = runs[-1]
            runs[-1] = (video, Span(last.t_start, max(last.t_end, span.t_end), last.text), max(best, w))
        else:
            runs.append((video, span, w))
    return [(span, w) for _, span, w in runs]


def _first_to_last(evidence: Sequence[Evidence], read: _Read) -> float | None:
    """The time from the start of the first run of the happening asked about (`_runs` of the
    items holding every word of it, `_Read.core`) to the start of its last; None with fewer
    than two runs."""
    starts = [span.t_start for span, _ in _runs(evidence, read.weight * (read.core_cover >= 1.0), read.core)]
    return max(starts) - min(starts) if len(starts) > 1 else None


def _about(item: Evidence, asked: set[str]) -> list[Span]:
    """An item's intervals (`Evidence.spans`) that hold all of the question's content words
    (an episodic window's finer captions that name the event), or all of them when none does;
    those that touch in time merged into one (an activity across consecutive windows)."""
    spans = item.spans()
    held = [s for s in spans if asked and asked <= forms(s.text)] or list(spans)
    merged: list[Span] = []
    for span in sorted(held, key=lambda s: (s.t_start, s.t_end)):
        if merged and span.t_start <= merged[-1].t_end + TOUCH:
            last = merged[-1]
            merged[-1] = Span(last.t_start, max(last.t_end, span.t_end), last.text)
        else:
            merged.append(span)
    return merged


def not_transcribed(unheard: Sequence[Evidence]) -> str:
    """The answer when the deciding words are in speech nobody transcribed: when it was heard
    (up to three moments, in time order)."""
    spans = sorted({(e.t_start, e.t_end) for e in unheard})
    said = ", ".join(f"{_clock(a)}-{_clock(b)}" for a, b in spans[:3])
    more = f" and {len(spans) - 3} more times" if len(spans) > 3 else ""
    return (
        f"Not known from memory: someone spoke at {said}{more}, but the words were not transcribed "
        "(no speech model), and nothing else in memory names any of the options."
    )


def _clock(t: float) -> str:
    """A week timeline's day form past the first day, a plain clock before it (the scorer does not
    know the store's timeline)."""
    return format_day(t) if t >= DAY else format_clock(t)
