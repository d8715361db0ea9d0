"""The offline answer step reads typed evidence (counts, intervals, speakers), never a memory's
prose. Questions are phrased for these tests, in forms no synthetic generator of the project
writes; names and things are made up."""

from __future__ import annotations

from dataclasses import replace

import pytest

from memory_stores import offline_models
from videomem.evidence import Count, Evidence, Span, Speech
from videomem.models.offline.clocks import question_stretches
from videomem.models.offline.daytime import question_window, relative_window, spoken_clocks
from videomem.models.offline.position import recording_window
from videomem.models.offline.language import OfflineLanguage
from videomem.models.offline.nlp import forms, places_of, root
from videomem.models.offline.scoring import SEMANTIC_WEIGHT


@pytest.fixture(scope="module")
def language() -> OfflineLanguage:
    return offline_models().language


def item(t: float, text: str, score: float = 0.5, source: str = "episodic", length: float = 30.0) -> Evidence:
    return Evidence(t, t + length, text, source, score, "v")


# ---------------------------------------------------------------- counts


def test_a_count_a_memory_computed_is_read_from_the_typed_field(language: OfflineLanguage) -> None:
    kettle = Count("lucia refill kettle", 5)
    # Only the two latest of the five intervals were returned; the count covers all five.
    found = [replace(item(t, "lucia refill kettle (1 window(s), 30 s)", 1.0, "timeline"), counts=(kettle,))
             for t in (4000, 9000)]
    other = replace(item(500, "jake tune guitar (2 window(s), 1 min 00 s)", 1.0, "timeline"),
                    counts=(Count("jake tune guitar", 7),))
    options = ["Twice", "3 times", "5 times", "7 times"]
    question = "Lucia refilled the kettle how many times before lunch?"
    assert language.answer(question, options, [other, *found]).answer == "5 times"
    untyped = [replace(e, counts=()) for e in found]
    assert language.answer(question, options, [other, *untyped]).answer == "Twice", (
        "without a typed count the separate intervals found are counted"
    )


def test_an_option_that_says_it_never_happened_is_a_count_of_nought(language: OfflineLanguage) -> None:
    """"Never" among counts: the count rule still reads the evidence (two feedings)."""
    evidence = [item(540, "I feed the cat in the kitchen.", 0.7), item(960, "I feed the cat again.", 0.6),
                item(600, "I wash the car in the driveway.", 0.5)]
    options = ["Once", "Twice", "Three times", "Never"]
    assert language.answer("How often did I feed the cat today?", options, evidence).answer == "Twice"
    assert language.answer("What's the number of times I fed the cat?", ["1", "2", "3", "4"], evidence).answer == "2"


def test_the_count_read_is_of_what_the_question_asks_not_of_something_narrower(language: OfflineLanguage) -> None:
    shelf = replace(item(9000, "keys state on the garage shelf (1 window(s), 30 s)", 1.0, "timeline"),
                    counts=(Count("keys state on the garage shelf", 1), Count("keys", 4)))
    sofa = replace(item(5000, "keys state under the sofa (1 window(s), 30 s)", 1.0, "timeline"),
                   counts=(Count("keys state under the sofa", 1), Count("keys", 4)))
    options = ["Once", "Twice", "4 times", "6 times"]
    assert language.answer("How often have the keys been put somewhere?", options, [shelf, sofa]).answer == "4 times"


def test_a_count_of_things_is_the_number_said_of_them(language: OfflineLanguage) -> None:
    """"How many thermoses …" is answered by the number a caption or a speaker puts before the
    word (three thermoses), not by how many moments show a thermos, and of two numbers by the
    one said of what the question asks (packing, not bringing next time)."""
    picnic = [item(100, "I rinse a thermos at the sink.", 0.6),
              item(700, "I pack three thermoses and two blankets into the picnic basket.", 0.5),
              item(900, "Ravi: Next time we should bring five thermoses.", 0.5)]
    options = ["One", "Two", "Three", "Five"]
    assert language.answer("How many thermoses did I pack?", options, picnic).answer == "Three"
    assert language.answer("How many blankets went into the basket?", options, picnic).answer == "Two"
    unsaid = [item(100, "I rinse a thermos at the sink.", 0.6), item(700, "I pack a thermos into the basket.", 0.5)]
    assert language.answer("How many thermoses did I handle?", options, unsaid).answer == "Two", (
        "no number said: the moments are counted"
    )


@pytest.mark.parametrize(
    ("text", "places"),
    [("On-screen text reads 'KEYS IN THE BLUE DRAWER'.", {frozenset({"blue", "drawer"})}),
     ("The keys are by the front door.", {frozenset({"front", "door"})}),
     ("I drop the keys under the sofa in the hallway.", {frozenset({"sofa", "hallway"})}),
     ("keys state in the red basket", {frozenset({"red", "basket"})}),
     ("I look for the keys in the hallway.", set()),  # where I looked, not where they were
     ("I hold the keys.", set())],
)
def test_where_a_text_says_a_thing_is(text: str, places: set[frozenset[str]]) -> None:
    assert places_of("key", text) == places


def test_how_often_a_thing_was_moved_is_how_often_the_place_said_of_it_changed(language: OfflineLanguage) -> None:
    """No caption says "moved": the lamp is said to stand somewhere, and where it stands changes
    twice on the second day (from where it stood the evening before); clips of dusting it or
    switching it on, and the same place said again by a longer window, are no moves."""
    evidence = [
        item(DAY - 5 * 3600, "The lamp is on the side table.", 0.5),
        item(DAY + 8 * 3600, "I dust the lamp.", 0.9),
        item(DAY + 9 * 3600, "I carry the lamp to the study and set the lamp on the desk.", 0.8),
        item(DAY + 9 * 3600, "I set the lamp on the oak desk. I read.", 0.7, length=600.0),
        item(DAY + 12 * 3600, "I switch on the lamp.", 0.7),
        item(DAY + 17 * 3600, "The lamp stands by the window.", 0.6),
        item(2 * DAY + 9 * 3600, "I put the lamp in the cupboard.", 0.4),
    ]
    options = ["Once", "Twice", "Three times", "Four times"]
    assert language.answer("How many times did I move the lamp on the second day?", options, evidence).answer == "Twice"
    assert language.answer("How many times was the lamp moved on day 3?", options, evidence).answer == "Once"


def test_an_item_that_holds_nothing_of_the_question_says_little_of_its_options(language: OfflineLanguage) -> None:
    """The garage and the car come up in three well-ranked items that say nothing of Ines or an
    umbrella; the one item that does says where it went, though it names only part of its
    option."""
    evidence = [item(900, "I walk into the garage by the car.", 0.9, "semantic"),
                item(1500, "I wash the car in the garage.", 0.8, "semantic"),
                item(2000, "I park the car in the garage.", 0.7, "semantic"),
                item(400, "I look out at the rain.", 0.9), item(600, "I make tea.", 0.7),
                item(1200, "Ines leaves the umbrella on the hook.", 0.6)]
    options = ["On the porch hook by the front steps", "In the garage by the car", "In the hallway closet",
               "On the kitchen chair"]
    assert language.answer("Where did Ines put her umbrella?", options, evidence).answer \
        == "On the porch hook by the front steps"


def test_a_count_written_in_prose_is_not_read(language: OfflineLanguage) -> None:
    prose = [item(t, "Lucia refills the kettle. The timeline holds 7 intervals of it.", 0.9) for t in (100, 700, 1300)]
    options = ["Once", "3 times", "7 times"]
    assert language.answer("Lucia refilled the kettle how many times?", options, prose).answer == "3 times"


# ---------------------------------------------------------------- durations


def test_how_long_is_the_duration_of_the_typed_interval_not_of_the_item(language: OfflineLanguage) -> None:
    window = item(0, "Shure and Katrina play a board game at the table, then tidy up.", 0.9, length=3600)
    options = ["Around 15 minutes", "About an hour", "Roughly 3 hours"]
    question = "The board game Shure played with Katrina went on for roughly what length of time?"
    assert language.answer(question, options, [window]).answer == "About an hour", "no interval: the item's range"
    game = replace(window, intervals=(Span(600, 1500, "shure play board game"),))
    assert language.answer(question, options, [game]).answer == "Around 15 minutes"


def _window(finer: list[tuple[float, str]], summary: str) -> Evidence:
    """A 10-min episodic window carrying its 30-s finer captions as intervals."""
    spans = tuple(Span(t, t + 30, text) for t, text in finer)
    return replace(item(0, summary, 0.9, length=600), scale=600.0, intervals=spans)


def test_a_window_counts_the_separate_finer_captions_that_name_the_event(language: OfflineLanguage) -> None:
    chat = "Tasha and Jake chat in the living room."
    finer = [(30.0 * k, chat) for k in range(20)]
    for k in (2, 9, 10, 15):  # three separate stretches: 9 and 10 abut
        finer[k] = (30.0 * k, "Tasha waters the orchid on the windowsill.")
    window = _window(finer, "Tasha waters the orchid on the windowsill and chats with Jake in the living room.")
    options = ["Once", "Twice", "3 times", "4 times"]
    question = "On how many separate occasions did Tasha give water to the orchid?"
    assert language.answer(question, options, [window]).answer == "3 times"
    assert language.answer(question, options, [replace(window, intervals=())]).answer == "Once", (
        "without its finer captions the window is one occasion"
    )


def test_a_window_measures_the_run_of_finer_captions_about_the_activity(language: OfflineLanguage) -> None:
    finer = [(30.0 * k, "Alice vacuums the hallway carpet." if k < 14 else "Alice sits down to read.") for k in range(20)]
    window = _window(finer, "Alice vacuums the hallway carpet, then sits down to read.")
    options = ["About 2 minutes", "About 7 minutes", "About 10 minutes"]
    question = "Roughly how much time did the carpet vacuuming in the hallway take?"
    assert language.answer(question, options, [window]).answer == "About 7 minutes", "14 abutting 30-s windows merged"
    unnamed = replace(window, intervals=tuple(replace(s, text="Someone is busy.") for s in window.intervals))
    assert language.answer(question, options, [unnamed]).answer == "About 10 minutes", (
        "no finer caption names it: the whole window is measured"
    )


def test_an_activity_seen_in_consecutive_items_lasted_as_long_as_their_run(language: OfflineLanguage) -> None:
    """Three 10-s clips in a row show the kayak being pumped up; the minute-long window that
    holds them is no bound on it, and a later clip of something else is no part of it."""
    clips = [item(t, "Noor pumps up the inflatable kayak on the jetty.", 0.9 - 0.1 * k, length=10)
             for k, t in enumerate((120, 130, 140))]
    window = item(100, "Noor pumps up the inflatable kayak on the jetty, then paddles off.", 0.8, length=60)
    later = item(400, "Noor paddles across the lake.", 0.7, length=10)
    options = ["About 10 seconds", "About 30 seconds", "About a minute", "About 5 minutes"]
    question = "How much time went into inflating the kayak with the pump?"
    assert language.answer(question, options, [clips[1], window, later, clips[0], clips[2]]).answer == "About 30 seconds"
    assert language.answer(question, options, [window, later]).answer == "About a minute", "only the window: its span"


# ---------------------------------------------------------------- who said it


def _conversation() -> list[Evidence]:
    lines = (
        Speech(40, 44, "we should book the train tickets tonight", speaker="Katrina"),
        Speech(45, 48, "I will bring the speaker for the party", speaker="Shure"),
        Speech(50, 53, "(speech, not transcribed)", transcribed=False),
    )
    # The caption names nobody: who said what is only in the typed lines.
    return [
        replace(item(30, "The group sits around the table and talks about plans.", 0.9), speech=lines),
        replace(item(300, "Tasha washes dishes at the sink.", 0.4),
                speech=(Speech(301, 304, "the dishes are done", speaker="Tasha"),)),
    ]


@pytest.mark.parametrize(
    "question",
    [
        "Who was talking about booking train tickets?",
        "Which person mentioned the train tickets?",
        "Whom did I hear suggest booking train tickets?",
        "Who brought up the train tickets?",
    ],
)
def test_who_said_it_is_the_speaker_of_the_best_matching_line(language: OfflineLanguage, question: str) -> None:
    options = ["Shure", "Tasha", "Katrina", "Lucia"]
    assert language.answer(question, options, _conversation()).answer == "Katrina"


def test_who_said_it_needs_a_speaker_some_option_names(language: OfflineLanguage) -> None:
    anonymous = [replace(e, speech=tuple(replace(s, speaker=None) for s in e.speech)) for e in _conversation()]
    options = ["Shure", "Tasha", "Katrina", "Lucia"]
    out = language.answer("Who was talking about booking train tickets?", options, anonymous)
    assert out.answer in options  # scored by content as any question, no speaker to read
    about_party = language.answer("Who was talking about the party speaker?", options, _conversation())
    assert about_party.answer == "Shure"


# ---------------------------------------------------------------- ends of the timeline


KEYS = [
    item(100, "The keys lie in the blue drawer.", 0.4),
    item(5000, "The keys lie under the sofa cushion.", 0.6),
    item(9000, "The keys lie on the kitchen table.", 0.5),
    item(9500, "A cat sleeps on the rug.", 0.9),
]


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("Where were the keys at the very start?", "In the blue drawer"),
        ("Where had the keys been lying originally?", "In the blue drawer"),
        ("Where are the keys now?", "On the kitchen table"),
        ("In the end, where did the keys lie?", "On the kitchen table"),
        ("Where were the keys lying most recently?", "On the kitchen table"),
    ],
)
def test_an_end_of_the_timeline_ranks_the_evidence_by_time(language: OfflineLanguage, question: str, answer: str) -> None:
    options = ["In the blue drawer", "Under the sofa cushion", "On the kitchen table"]
    assert language.answer(question, options, KEYS).answer == answer


SWIMS = [
    item(3600, "Rosa swims in the lake.", 0.5),
    item(3630, "Rosa swims in the lake, then dries off.", 0.9),  # the same swim, the next clip
    item(5 * 3600, "Rosa swims at the pool.", 0.4),
    item(7 * 3600, "Rosa reads on the terrace.", 0.8),
    item(9 * 3600, "Rosa swims in the sea.", 0.6),
]


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("Where did Rosa swim the second time?", "At the pool"),
        ("Where did Rosa swim on the third occasion?", "In the sea"),
        ("Where did Rosa go swimming the second-to-last time?", "At the pool"),
        ("Where did Rosa swim the penultimate time?", "At the pool"),
    ],
)
def test_an_ordinal_counts_occasions_not_clips(language: OfflineLanguage, question: str, answer: str) -> None:
    """Two abutting clips of one swim in the lake are its first occasion; the pool is the
    second from either end."""
    options = ["In the lake", "At the pool", "In the sea", "In the river"]
    assert language.answer(question, options, SWIMS).answer == answer


def test_a_place_in_the_sequence_ranks_the_happenings_the_options_name(language: OfflineLanguage) -> None:
    """The options are the happenings; each is found at the first interval that names it, and
    the second of those times is the answer, whatever the clips' ranks."""
    evidence = [
        item(600, "Idris irons his shirts.", 0.9),
        item(60, "Idris makes porridge.", 0.3),
        item(300, "Idris walks the dog to the park.", 0.5),
        item(330, "Idris walks the dog back home.", 0.7),
        item(900, "Idris makes a phone call.", 0.8),
    ]
    options = ["Ironed his shirts", "Made porridge", "Walked the dog", "Made a phone call"]
    assert language.answer("Which chore did Idris do second?", options, evidence).answer == "Walked the dog"
    assert language.answer("What was the third thing Idris did?", options, evidence).answer == "Ironed his shirts"


DUTIES = [
    *(item(1000 + 30 * k, "Mei paints the fence.", 0.5) for k in range(4)),  # one 2-min run
    *(item(3000 + 900 * k, "Mei chops the firewood.", 0.6) for k in range(5)),  # five 30-s runs
    item(8000, "Mei feeds the goats.", 0.9),
]


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("Which job took Mei the longest?", "Painting the fence"),
        ("What did Mei spend the most time on?", "Chopping firewood"),
        ("Which of these lasted the shortest?", "Feeding the goats"),
    ],
)
def test_the_longest_happening_is_measured_on_its_runs(language: OfflineLanguage, question: str, answer: str) -> None:
    """Painting is one 2-min stretch, the chopping five half-minutes apart (2.5 min in all):
    "took the longest" is the longest stretch, "spent the most time" all of them added up."""
    options = ["Painting the fence", "Chopping firewood", "Feeding the goats", "Milking the cow"]
    assert language.answer(question, options, DUTIES).answer == answer


CHORES = [
    *(item(100 + 30 * k, "Ana mops the hall.", 0.5) for k in range(4)),  # one 2-min run
    item(400, "Ana dusts the shelves.", 0.6),
    item(900, "Ana waters the ferns.", 0.7),
]


def test_an_options_noun_is_found_by_the_stem_the_captions_verb_shares(language: OfflineLanguage) -> None:
    """"The mopping" is in "Ana mops the hall": the option names the act by its noun."""
    options = ["The dusting", "The mopping"]
    assert language.answer("Which chore took longer, the mopping or the dusting?", options, CHORES).answer == "The mopping"
    assert language.answer("Which was shorter, the mopping or the dusting?", options, CHORES).answer == "The dusting"


def test_how_long_someone_was_away_is_the_stretch_between_two_sightings(language: OfflineLanguage) -> None:
    """No item says how long Ama was away: she is seen leaving, then seen again; the stretch
    between is the answer, not the length of either clip nor the time between other items."""
    office = [item(9 * 3600, "Ama types at her desk.", 0.4), item(9 * 3600 + 600, "Ama leaves the office with her bag.", 0.6),
              item(9 * 3600 + 900, "The office is quiet; the printer hums.", 0.7),
              item(10 * 3600 + 600, "Ama comes back and sits at her desk.", 0.5),
              item(10 * 3600 + 1200, "Ama answers the phone.", 0.3)]
    options = ["About 30 seconds", "About 10 minutes", "About 1 hour", "About 5 hours"]
    assert language.answer("For how long was Ama away from her desk?", options, office).answer == "About 1 hour"
    assert language.answer("How long was Ama gone?", options, office).answer == "About 1 hour"


def test_bare_numbers_are_amounts_of_the_unit_the_question_counts(language: OfflineLanguage) -> None:
    options = ["1", "2", "5", "10"]
    assert language.answer("For how many minutes did Ana mop the hall?", options, CHORES).answer == "2"


@pytest.mark.parametrize(
    "options",
    [
        ["Dusting, then mopping, then watering", "Mopping, then dusting, then watering",
         "Watering, then mopping", "Mopping, then watering, then dusting"],
        ["Watering the ferns -> mopping the hall", "Mopping the hall -> dusting the shelves",
         "Dusting the shelves -> mopping the hall"],
        ["Dusting, mopping, watering", "Mopping, dusting and watering", "Watering, mopping, dusting"],
    ],
)
def test_options_that_list_happenings_in_order_are_read_from_when_each_was_recorded(
    language: OfflineLanguage, options: list[str]
) -> None:
    """Each listed happening is found at the first interval that names it; the option whose
    every happening is found in its order wins, whatever the clips' ranks."""
    evidence = sorted(CHORES, key=lambda e: -e.t_start)  # the latest first
    assert language.answer("In which order did Ana do her chores?", options, evidence).answer == options[1]


def test_empty_is_a_word_to_look_for(language: OfflineLanguage) -> None:
    """spaCy lists "empty" as a stopword; here it is what the question asks about."""
    evidence = [*(item(3600 + 30 * k, "Ana sweeps the garage floor.", 0.6) for k in range(4)),
                item(7200, "The garage is empty; nobody is in it.", 0.5, length=1200)]
    options = ["About 2 minutes", "About 20 minutes", "About 2 hours"]
    assert language.answer("Roughly how long was the garage empty?", options, evidence).answer == "About 20 minutes"


# ---------------------------------------------------------------- parts of the day


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("Once the morning starts, what am I typically busy with?", "Make coffee"),
        ("In the mornings, what do I get done before anything else?", "Make coffee"),
        ("Each evening, which chore do I take care of?", "Walk the dog"),
        ("What is the last thing I do in the evening?", "Walk the dog"),
    ],
)
def test_a_part_of_the_day_weights_the_evidence_recorded_then(language: OfflineLanguage, question: str, answer: str) -> None:
    day = 86400.0
    evidence = [item(d * day + 8 * 3600, "On-screen text reads 'MAKING COFFEE'.") for d in range(2)]
    evidence += [item(d * day + 18 * 3600, "On-screen text reads 'WALKING THE DOG'.", 0.6) for d in range(2)]
    assert language.answer(question, ["Walk the dog", "Make coffee", "Bake a cake"], evidence).answer == answer


# ---------------------------------------------------------------- how much footage an item spans


def test_a_moment_that_names_an_option_outweighs_an_hour_that_names_another(language: OfflineLanguage) -> None:
    """An hour's summary names much that happened in it; a 30-s caption names what happened
    then. Both about the question, the summary ranked first: the moment's option wins, and the
    summary's when it spans 30 s too."""
    question = "What did Lucia put in the fridge?"
    options = ["The watermelon", "The milk", "The eggs"]
    hour = item(3600, "In this hour Lucia cleans the kitchen and puts the milk in the fridge.", 0.9, length=3600)
    moment = item(5000, "Lucia puts the watermelon in the fridge.", 0.8)
    assert language.answer(question, options, [hour, moment]).answer == "The watermelon"
    assert language.answer(question, options, [replace(hour, t_end=hour.t_start + 30), moment]).answer == "The milk"


# ---------------------------------------------------------------- order


ORDER_EVIDENCE = [
    item(500, "Bob fixes the bicycle in the garage.", 0.9),
    item(0, "Bob fixes the bicycle, Alice waters the plants and Carol reads.", 0.8, length=600),
    item(100, "Alice waters the plants on the balcony.", 0.6),
]
ORDER_OPTIONS = ["Both at once", "Bob fixing the bicycle", "Alice watering the plants", "Neither happened"]


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("Did Alice water the plants or did Bob fix the bicycle first?", "Alice watering the plants"),
        ("Which came later, Alice watering the plants or Bob fixing the bicycle?", "Bob fixing the bicycle"),
        ("Of Bob fixing the bicycle and Alice watering the plants, which did I see last?", "Bob fixing the bicycle"),
    ],
)
def test_an_order_question_is_read_from_when_each_happening_was_recorded(
    language: OfflineLanguage, question: str, answer: str
) -> None:
    """The clip about Bob ranks first and a 10-min summary names both from its start; the times
    of the clips that name each happening decide."""
    assert language.answer(question, ORDER_OPTIONS, ORDER_EVIDENCE).answer == answer


def test_an_order_question_finds_a_happening_in_a_windows_finer_captions(language: OfflineLanguage) -> None:
    """A coarse window's own start says nothing about which of its happenings came first; its
    finer captions (`Evidence.intervals`) do."""
    window = replace(
        ORDER_EVIDENCE[1],
        intervals=(Span(0, 30, "Carol reads."), Span(30, 60, "Bob fixes the bicycle."), Span(400, 430, "Alice waters the plants.")),
    )
    question = "Did Alice water the plants or did Bob fix the bicycle first?"
    assert language.answer(question, ORDER_OPTIONS, [window]).answer == "Bob fixing the bicycle"


# ---------------------------------------------------------------- time-range options


def test_an_option_named_far_from_the_questions_words_in_a_long_sentence_is_not_what_it_says(
    language: OfflineLanguage,
) -> None:
    """A long caption names Lena twenty words after the repair; the next one says who helped."""
    evidence = [
        item(100, "Omar repairs the bicycle in the yard while the radio plays an old song and the cat sleeps on "
                  "the warm sofa near the window and Lena waters the plants.", 0.9),
        item(130, "Yusuf helps Omar repair the bicycle.", 0.8),
    ]
    options = ["Lena", "Yusuf", "Mira"]
    assert language.answer("Who gave Omar a hand fixing the bicycle?", options, evidence).answer == "Yusuf"
    near = [replace(evidence[0], text="Omar and Lena repair the bicycle in the yard."), evidence[1]]
    assert language.answer("Who gave Omar a hand fixing the bicycle?", options, near).answer == "Lena", (
        "named beside the repair in the first caption, Lena is the better-ranked answer"
    )


def test_an_option_several_items_support_leads_one_a_single_item_names(language: OfflineLanguage) -> None:
    """The best-ranked clip says spelt, the next two say rye: the evidence as a whole says rye."""
    evidence = [
        item(100, "Piotr bakes the bread with spelt flour.", 0.9),
        item(400, "Piotr bakes bread with rye flour.", 0.8),
        item(700, "The rye flour for the bread is nearly used up after Piotr baked.", 0.7),
    ]
    options = ["Spelt", "Rye", "Corn"]
    question = "Which flour went into the bread Piotr baked?"
    assert language.answer(question, options, evidence).answer == "Rye"
    assert language.answer(question, options, evidence[:2]).answer == "Spelt", "one item each: the better-ranked wins"


def test_an_option_each_of_whose_parts_some_item_holds_leads_one_with_a_part_nothing_holds(
    language: OfflineLanguage,
) -> None:
    """The two accounts of the afternoon match the same three best items (the fern); only
    Omar's call is held anywhere, in a low-ranked item outside the three that count. The words
    alone (the score less its centred meaning part) put the account whose every part is held
    first; before, they tied and meaning chose."""
    evidence = [
        item(100, "Priya repots the fern on the balcony.", 0.9),
        item(400, "Priya eats lentil soup at the table.", 0.8),
        item(700, "Priya repots the fern and sweeps the balcony.", 0.7),
        item(800, "The repotted fern stands in the sun.", 0.6),
        item(900, "Omar phones.", 0.2),
    ]
    options = [
        "repotting the fern; lentil soup; a call from Lena",
        "repotting the fern; lentil soup; a call from Omar",
        "washing the car; lentil soup; a call from Omar",
    ]
    question = "Which account fits Priya's afternoon?"
    total, meaning = language.scorer.totals(question, options, evidence)
    words = total - SEMANTIC_WEIGHT * (meaning - meaning.mean())
    assert words[1] > words[0] > words[2]
    assert language.answer(question, options, evidence).answer == options[1]


def test_left_that_names_a_side_is_not_where_something_was_left(language: OfflineLanguage) -> None:
    """The latest item's "top-left corner" is no leaving: the wallet was last left by the sink."""
    evidence = [
        item(100, "Tomas left his wallet on the piano.", 0.9),
        item(500, "Tomas left his wallet by the sink.", 0.8),
        item(900, "A green mug sits in the top-left corner of the desk.", 0.7),
    ]
    options = ["On the piano", "By the sink", "On the desk"]
    assert language.answer("Where did Tomas most recently leave his wallet?", options, evidence).answer == "By the sink"
    assert "leave" in forms("She left early.") and "leave" not in forms("He turned to the left with his left hand.")


@pytest.mark.parametrize("question", ["Which colour caught the eye while Priya repotted the fern?",
                                      "What color was most noticeable when the fern was repotted?"])
def test_a_things_one_colour_says_more_than_a_list_of_the_views_colours(language: OfflineLanguage, question: str) -> None:
    evidence = [
        item(100, "Priya repots the fern on the balcony. The main colours are green, white and grey. "
                  "An orange watering can stands by the door.", 0.9),
        item(400, "Priya waters the fern. The view is mostly green.", 0.5),
    ]
    assert language.answer(question, ["green", "orange", "purple", "white"], evidence).answer == "orange"
    assert "orange" in language.answer(question, None, evidence[:1]).answer, "free form: the same sentence"
    listed = [replace(evidence[0], text=evidence[0].text.replace("green, white", "purple, white")), evidence[1]]
    assert language.answer(question, ["blue", "orange", "purple", "yellow"], listed).answer == "orange", (
        "'purple' alone parses as a noun, and is a colour all the same"
    )


def test_a_colour_said_of_the_thing_asked_about_is_its_colour(language: OfflineLanguage) -> None:
    """"a green flag" says the flag's colour in full, though the sentence names another colour
    for another thing: of the sentence's two colours, the one said of the flag is its colour."""
    evidence = [
        item(100, "The marshal walks past the red car; the race restarts.", 0.9),
        item(400, "A white van stops; the marshal raises a green flag.", 0.7),
    ]
    assert language.answer("What flag does the marshal raise?", ["Red", "Green", "White", "Yellow"], evidence).answer == "Green"


def test_a_question_word_an_option_repeats_makes_no_sentence_about_the_question(language: OfflineLanguage) -> None:
    """"room" is the question's word and the living room's: captions that only name the living
    room are not about where Omar fixed the bicycle."""
    evidence = [
        item(100, "Lena reads a novel in the living room.", 0.9),
        item(200, "Yusuf naps on the living room sofa.", 0.8),
        item(300, "The living room lamp flickers.", 0.7),
        item(400, "Omar fixes the bicycle chain in the garage.", 0.6),
    ]
    options = ["Living room", "Garage", "Attic"]
    assert language.answer("In which room did Omar fix the bicycle?", options, evidence).answer == "Garage"


def test_time_range_options_are_read_by_the_timeline_parser(language: OfflineLanguage) -> None:
    evidence = [item(300, "Alice opens the garden gate.", 0.6, length=10), item(100, "Bob waters the plants.", 0.5, length=10)]
    seconds = ["90 to 120", "290 to 320", "780 to 810"]
    assert language.answer("At which point in the video did Alice open the garden gate?", seconds, evidence).choice == "B"
    clocks = ["00:01:30 – 00:02:00", "00:04:50 – 00:05:20", "00:13:00 – 00:13:30"]
    assert language.answer("At which point in the video did Alice open the garden gate?", clocks, evidence).choice == "B"


def test_a_count_question_keeps_dashed_options_as_counts(language: OfflineLanguage) -> None:
    boxes = [item(t, "Bob carries a box to the van.", 0.5) for t in (100, 400, 700)]
    out = language.answer("Bob carried a box to the van how many times?", ["1-2", "3-4", "5-6"], boxes)
    assert out.answer == "3-4"


@pytest.mark.parametrize(
    ("phrase", "window"),
    [
        ("around minute 4", (240, 300)),
        ("Minute 0", (0, 60)),
        ("in the 12th minute", (660, 720)),
        ("about three minutes in", (150, 210)),
        ("at the 5-minute mark", (270, 330)),
        ("90 seconds into the video", (89.5, 90.5)),
        ("at 04:10", (250, 250)),
        ("1:02:03", (3723, 3723)),
    ],
)
def test_a_place_in_the_recording_is_a_stretch_of_its_timeline(phrase: str, window: tuple[float, float]) -> None:
    assert recording_window(phrase) == window


@pytest.mark.parametrize("phrase", ["3 minutes in the kitchen", "30 minutes in total", "About 20 minutes ago",
                                    "roughly 10 seconds", "Yesterday afternoon", "the 0th minute"])
def test_a_phrase_that_names_no_place_in_the_recording_is_none(phrase: str) -> None:
    assert recording_window(phrase) is None


def test_options_that_name_places_in_the_recording_are_read_from_when_the_evidence_was_recorded(
    language: OfflineLanguage,
) -> None:
    """The clip of the gate being painted was recorded at 6:40; its words say "2" and "minute"."""
    evidence = [
        item(400, "Ravi paints the garden gate green; it takes him 2 coats and a minute of drying.", 0.9, length=20),
        item(130, "Ravi mixes green paint in a bucket.", 0.6, length=20),
    ]
    options = ["around minute 2", "around minute 5", "around minute 6", "around minute 9"]
    question = "At roughly which point of the footage does Ravi paint the gate?"
    assert language.answer(question, options, evidence).answer == "around minute 6"
    marks = ["the 2-minute mark", "the 4-minute mark", "the 7-minute mark"]
    assert language.answer(question, marks, evidence).answer == "the 7-minute mark", "6:50 rounds to 7 minutes"
    minutes = ["1", "2", "7", "9"]
    assert language.answer("How many minutes into the video does Ravi paint the gate?", minutes, evidence).answer == "7", (
        "a place counted in minutes, not how long the painting took (20 s, nearest 1)"
    )


def test_a_bare_clock_is_a_time_of_day_where_the_evidence_is_a_days_footage(language: OfflineLanguage) -> None:
    """'09:40' is 9 min 40 s into a video, but in footage recorded from 08:00 to 17:00 nothing
    lies near that place and the morning's 09:40 is where the evidence is: the question's and
    the options' clocks are read on the clock of the day, for each day of the footage."""
    day = [item(8 * 3600, "Lena feeds the hens in the yard.", 0.9),
           *(item(9 * 3600 + 60 * 38 + 30 * k, "Lena mends the fence by the road.", 0.3) for k in range(4)),
           item(15 * 3600, "Lena bakes bread in the kitchen.", 0.8),
           item(16 * 3600 + 1800, "Lena feeds the hens again.", 0.7)]
    options = ["Feeding the hens", "Mending the fence", "Baking bread"]
    assert language.answer("What was Lena doing at 09:40?", options, day).answer == "Mending the fence"
    later = [replace(e, t_start=e.t_start + 2 * DAY, t_end=e.t_end + 2 * DAY) for e in day]
    assert language.answer("What was Lena doing at 09:40?", options, later).answer == "Mending the fence", "on the third day"
    clocks = ["Around 08:00", "Around 09:40", "Around 15:00", "Around 16:30"]
    assert language.answer("When did Lena bake bread?", clocks, later).answer == "Around 15:00"
    video = [item(580, "Lena mends the fence by the road.", 0.3), item(9 * 3600, "Lena feeds the hens in the yard.", 0.9)]
    assert language.answer("What was Lena doing at 09:40?", options, video).answer == "Mending the fence", (
        "a place in the recording, where the evidence is near it"
    )


# ---------------------------------------------------------------- days named relative to now

DAY = 86400.0
NOW = 3 * DAY + 15 * 3600  # the fourth day at 15:00


@pytest.mark.parametrize(
    ("phrase", "day", "hours"),
    [
        ("Yesterday afternoon", 2, (12, 18)),
        ("last night", 2, (18, 29)),
        ("The night before yesterday", 1, (18, 29)),
        ("the day before yesterday, around noon", 1, (11, 13)),
        ("Earlier today, in the morning", 3, (5, 12)),
        ("This evening", 3, (18, 22)),
        ("Today", 3, (0, 24)),
        ("3 days ago", 0, (0, 24)),
        ("two days ago", 1, (0, 24)),
    ],
)
def test_a_day_named_relative_to_now_is_a_stretch_of_the_timeline(phrase: str, day: int, hours: tuple[int, int]) -> None:
    assert relative_window(phrase, NOW) == (day * DAY + hours[0] * 3600, day * DAY + hours[1] * 3600)


@pytest.mark.parametrize("phrase", ["In the afternoon", "At 14:00", "Twice", "Last week's market"])
def test_a_phrase_that_names_no_day_relative_to_now_is_none(phrase: str) -> None:
    assert relative_window(phrase, NOW) is None


RELATIVE_DAYS = ["This morning", "Yesterday afternoon", "Last night", "The afternoon before yesterday"]


def test_options_that_name_days_relative_to_now_are_read_from_when_the_evidence_was_recorded(
    language: OfflineLanguage,
) -> None:
    """The clip that shows the ladder being used was recorded yesterday at 20:40; its words name
    'this morning' and 'afternoon', which a match on words would take for the answer."""
    evidence = [
        item(2 * DAY + 20 * 3600 + 40 * 60, "Kofi climbs the ladder to fix the lamp; he says he meant to do it this morning.", 0.9),
        item(3 * DAY + 9 * 3600, "Kofi drinks tea in the afternoon sun of the garden.", 0.8),
    ]
    question = "At what point did Kofi last climb the ladder?"
    assert language.answer(question, RELATIVE_DAYS, evidence, now=NOW).answer == "Last night"
    earlier = [replace(evidence[0], t_start=evidence[0].t_start - DAY - 5 * 3600, t_end=evidence[0].t_end - DAY - 5 * 3600)]
    assert language.answer(question, RELATIVE_DAYS, earlier, now=NOW).answer == "The afternoon before yesterday"


@pytest.mark.parametrize(("hours_before", "answer"), [(51, "2 days 3 hours ago"), (12, "Half a day ago"), (27, "Yesterday")])
def test_an_amount_of_time_ago_is_weighed_with_options_that_name_days(
    language: OfflineLanguage, hours_before: float, answer: str
) -> None:
    evidence = [item(NOW - hours_before * 3600, "Kofi oils the hinges of the gate.", 0.9)]
    options = ["Yesterday", "Three days ago", "Half a day ago", "2 days 3 hours ago"]
    assert language.answer("When did Kofi last oil the gate?", options, evidence, now=NOW).answer == answer


def test_the_occasion_the_question_is_asked_on_is_not_the_last_time_before_it(language: OfflineLanguage) -> None:
    """Asked while Kofi is on the ladder: the clip ten minutes ago is this occasion; the time
    before it is the one asked about."""
    evidence = [
        item(NOW - 600, "Kofi climbs the ladder again.", 0.9),
        item(3 * DAY + 8 * 3600, "Kofi climbs the ladder with a bulb.", 0.8),
    ]
    options = ["This afternoon", "This morning", "Last night", "Yesterday afternoon"]
    assert language.answer("When had Kofi last been up the ladder?", options, evidence, now=NOW).answer == "This morning"


def test_the_last_time_a_thing_was_used_is_found_where_it_is_handled_not_where_its_description_recurs(
    language: OfflineLanguage,
) -> None:
    """"Used" names no action of its own and "on the counter" only says which kettle: the clip
    where the kettle is filled yesterday afternoon is the last use, though an older clip holds
    every word of the question."""
    evidence = [
        item(1 * DAY + 21 * 3600, "Ines uses the kettle on the counter to make tea.", 0.9),
        item(2 * DAY + 16 * 3600, "Ines fills the kettle and switches it on.", 0.6),
        item(3 * DAY + 9 * 3600, "Ines wipes the counter.", 0.5),
    ]
    question = "When was the kettle on the counter last used?"
    options = ["Yesterday afternoon", "The night before yesterday", "This morning", "Last night"]
    assert language.answer(question, options, evidence, now=NOW).answer == "Yesterday afternoon"


def test_without_an_end_of_the_timeline_the_description_picks_out_the_occasion(language: OfflineLanguage) -> None:
    """Not asked for the last time, "the kettle on the counter" is the occasion it stood there:
    the clip that says so, though a later clip where the kettle is filled ranks first."""
    evidence = [
        item(2 * DAY + 16 * 3600, "Ines fills the kettle and switches it on.", 0.9),
        item(1 * DAY + 21 * 3600, "Ines uses the kettle on the counter to make tea.", 0.6),
    ]
    options = ["Yesterday afternoon", "The night before yesterday", "This morning", "Last night"]
    answer = language.answer("When was the kettle on the counter used?", options, evidence, now=NOW).answer
    assert answer == "The night before yesterday"


def test_a_question_naming_the_act_by_its_noun_finds_the_clip_that_names_the_verb(language: OfflineLanguage) -> None:
    """"the last inspection of the bike" is the clip where Ines inspects it, though a later clip
    holds the bike too: a noun derived from a verb is matched to that verb (`nlp.root`)."""
    evidence = [
        item(1 * DAY + 16 * 3600, "Ines inspected the bike tyres in the garage.", 0.6),
        item(2 * DAY + 21 * 3600, "Ines rides the bike to the shop.", 0.9),
    ]
    question = "When was the last inspection of the bike?"
    options = ["Yesterday afternoon", "The afternoon before yesterday", "This morning", "Last night"]
    assert language.answer(question, options, evidence, now=NOW).answer == "The afternoon before yesterday"
    assert root("inspection") == root("inspected") == root("inspects")
    assert root("inspection") not in {"inspection", "inspect"}  # a key, never a word


def test_in_total_asks_for_a_count_and_is_no_word_to_look_for(language: OfflineLanguage) -> None:
    """"in total" sums the occasions; its stem in "totally" picks none of them out."""
    evidence = [item(600 * n, text) for n, text in enumerate([
        "Omar plays the guitar on the sofa.", "Omar plays the guitar, totally out of tune.",
        "Omar plays the guitar for the children."])]
    question = "How many times did Omar play the guitar in total?"
    assert language.answer(question, ["1 time", "2 times", "3 times"], evidence).answer == "3 times"


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("What do I usually eat for lunch?", "Noodles"),
        ("These days, what do I eat for lunch?", "Salad"),
        ("What did I switch to for lunch?", "Salad"),
        ("What have I had for lunch over the past two days?", "Salad"),
        ("What do I no longer eat for lunch?", "Noodles"),
    ],
)
def test_a_habit_that_changed_is_read_at_the_end_the_question_asks_about(
    language: OfflineLanguage, question: str, answer: str
) -> None:
    """Noodles for lunch three days, then a salad two days (the salad clip found first): the
    habit over the week is noodles, the new one a salad."""
    evidence = [item(d * DAY + 12.5 * 3600, f"I eat {food} for lunch{where}.", score) for d, food, where, score in [
        (0, "noodles", " at the table", 0.9), (1, "noodles", " with Bob", 0.8), (2, "noodles", "", 0.7),
        (3, "a salad", " at my desk", 0.95), (4, "a salad", " on the sofa", 0.6)]]
    options = ["Noodles", "Salad", "Pizza", "Soup"]
    assert language.answer(question, options, evidence, now=4 * DAY + 15 * 3600).answer == answer


def test_an_options_article_is_no_part_of_its_whole_match(language: OfflineLanguage) -> None:
    """"A sponge" gets no extra match from a caption that happens to say "a sponge" where the
    caption about the rinsing says "the hose"."""
    evidence = [item(600, "I wash the car with a sponge.", 0.5), item(690, "I rinse the car with the hose.", 0.4)]
    options = ["A hose", "A bucket", "A sponge", "A towel"]
    assert language.answer("What did I use to rinse the car?", options, evidence).answer == "A hose"


# ---------------------------------------------------------------- ranks within each memory


def test_an_items_rank_is_its_place_among_its_own_memorys_items(language: OfflineLanguage) -> None:
    """Semantic memory scores a few tenths (a PPR sum) where episodic memory's best is 1.0; its
    best triplet is its first item, not an item ranked after every caption."""
    captions = [item(100 * n, f"Mina waits at the corner of {street} street.", 1.0 - 0.1 * n) for n, street in
                enumerate(["Elm", "Oak", "Pine", "Birch"])]
    captions.append(item(900, "Mina takes the tram to the library.", 0.5))
    triplet = item(1000, "Mina usually takes the bus to the library.", 0.3, source="semantic")
    options = ["By tram", "By bus", "On foot"]
    assert language.answer("How does Mina get to the library?", options, [*captions, triplet]).answer == "By bus"


# ---------------------------------------------------------------- days named in the question


@pytest.mark.parametrize(
    ("question", "window"),
    [
        ("What did Lucia bake on the second day?", (DAY, 2 * DAY)),
        ("Which board game came out on day 4?", (3 * DAY, 4 * DAY)),
        ("What happened on DAY1 before lunch?", (0.0, DAY)),
        ("Did we cook more on day 2 or on the third day?", None),  # two days
        ("Who said the parcel came yesterday?", None),  # a day relative to now: often another clause's
        ("Where is the charger?", None),
    ],
)
def test_the_day_a_question_names_is_a_stretch_of_the_timeline(question: str, window: tuple | None) -> None:
    assert question_window(question) == window


def test_evidence_from_the_day_the_question_names_leads(language: OfflineLanguage) -> None:
    evidence = [item(DAY + 40000, "Lucia bakes a pie in the oven.", 0.9), item(40000, "Lucia bakes muffins in the oven.", 0.5)]
    options = ["A pie", "Muffins"]
    assert language.answer("What did Lucia bake?", options, evidence).answer == "A pie"
    assert language.answer("What did Lucia bake on the first day?", options, evidence).answer == "Muffins"


@pytest.mark.parametrize("said", ["on the day", "on the same day", "on the very day"])
def test_a_day_named_by_what_happened_on_it_is_the_day_the_evidence_puts_it_on(language: OfflineLanguage, said: str) -> None:
    evidence = [
        item(2 * DAY + 16.5 * 3600, "Alice comes to visit in the hallway.", 0.9),
        item(2 * DAY + 12.5 * 3600, "I eat pizza for lunch in the kitchen.", 0.8),
        item(DAY + 12.5 * 3600, "I eat dumplings for lunch in the kitchen.", 0.6),
        item(DAY + 15 * 3600, "David comes to visit in the hallway.", 0.5),
    ]
    question = f"Who came to see me {said} I had dumplings for lunch?"
    assert language.answer(question, ["Alice", "David"], evidence).answer == "David"


def test_the_time_between_two_happenings_is_measured_from_one_to_the_other(language: OfflineLanguage) -> None:
    evidence = [
        item(9 * 3600, "Katrina unpacks the groceries in the kitchen.", 0.9),
        item(13 * 3600, "A friend of Tasha arrives at the front door.", 0.6),
        item(20 * 3600, "Jake tunes the guitar.", 0.3),
    ]
    options = ["About an hour", "Around four hours", "Nearly eleven hours"]
    question = "Roughly how long passed between Katrina unpacking the groceries and the friend arriving?"
    assert language.answer(question, options, evidence).answer == "Around four hours"


def test_where_something_was_at_a_moment_is_where_it_was_last_put_by_then(language: OfflineLanguage) -> None:
    evidence = [
        item(DAY + 12 * 3600, "The wall clock shows 12:00 while Jake reads.", 0.95),  # the time's digits are no content
        item(DAY + 15 * 3600, "Alice puts the scissors on the desk.", 0.9),
        item(DAY + 9 * 3600, "Alice puts the scissors in the drawer.", 0.6),
    ]
    options = ["On the desk", "In the drawer"]
    assert language.answer("Where were the scissors at 12:00 on the second day?", options, evidence).answer == "In the drawer"
    assert language.answer("Where were the scissors at 16:30 on the second day?", options, evidence).answer == "On the desk"


def test_where_something_was_right_after_a_happening_is_where_it_was_last_put_by_then_whichever_day(
        language: OfflineLanguage) -> None:
    evidence = [
        item(2 * DAY + 8 * 3600, "I make coffee in the kitchen, by the kitchen table.", 0.95),
        item(DAY + 8 * 3600, "I make coffee in the kitchen.", 0.8),
        item(DAY + 19.5 * 3600, "I drop the keys under the sofa in the hallway.", 0.7),
        item(2 * DAY + 18 * 3600, "I put the keys on the garage shelf.", 0.6),  # after the coffee: not yet
        item(9 * 3600, "I leave the keys in the blue drawer.", 0.5),
    ]
    options = ["On the garage shelf", "Under the sofa", "In the blue drawer", "On the kitchen table"]
    question = "Right after my coffee on the morning of DAY3, where were the keys?"
    assert language.answer(question, options, evidence).answer == "Under the sofa"
    assert language.answer("Where were the keys just before my coffee on DAY2?", options, evidence).answer == "In the blue drawer"


def test_an_order_option_is_found_by_its_happening_not_by_its_time_of_day_or_preposition(
    language: OfflineLanguage,
) -> None:
    evidence = [
        item(15 * 3600, "Jake drinks tea on the balcony.", 0.9),
        item(10 * 3600, "Jake walks with Nicous along the river.", 0.5),
    ]
    options = ["Tea at noon", "A walk alongside Nicous"]
    question = "Thinking of Jake: tea at noon, or a walk alongside Nicous, which was earlier?"
    assert language.answer(question, options, evidence).answer == "A walk alongside Nicous"


def test_an_order_option_said_in_other_words_is_found_by_meaning(language: OfflineLanguage) -> None:
    evidence = [
        item(12.5 * 3600, "Lucia eats a bowl of soup at the kitchen table.", 0.9),
        item(10 * 3600, "Shure comes to visit and rings the doorbell.", 0.5),
        item(8 * 3600, "Jake tunes the guitar.", 0.4),
    ]
    options = ["Lucia having soup", "Shure dropping by", "Both at once", "Neither happened"]
    question = "Which happened earlier, Lucia having soup or Shure dropping by?"
    assert language.answer(question, options, evidence).answer == "Shure dropping by"


def test_a_day_named_by_what_happened_on_it_weighs_that_days_evidence(language: OfflineLanguage) -> None:
    evidence = [
        item(16.5 * 3600, "Katrina comes to visit and knocks on the door.", 0.9),
        item(DAY + 16.5 * 3600, "Shure comes to visit and knocks on the door.", 0.6),
        item(DAY + 12.5 * 3600, "Lucia eats pizza at the table.", 0.5),
        item(12.5 * 3600, "Lucia eats noodles at the table.", 0.4),
    ]
    options = ["Katrina", "Shure"]
    assert language.answer("On the day Lucia had pizza, who came to visit?", options, evidence).answer == "Shure"
    assert language.answer("On the day Lucia had noodles, who came to visit?", options, evidence).answer == "Katrina"


# ---------------------------------------------------------------- a time or a stretch named


def test_a_stretch_between_two_clocks_is_read_from_the_items_that_overlap_it(language: OfflineLanguage) -> None:
    """"From 10:00 to 13:00" names three minutes of a video, which a 3-min window tells as
    finely as it needs to; and where a long window is the only item that holds a moment, the
    clips of other moments that a search ranked before it do not outweigh it."""
    quiet = Evidence(600, 780, "The garage is quiet; no one is in the frame.", "episodic", 0.3, "v")
    video = [*(item(30 * k, "A mechanic jacks up the red car in the garage.", 0.6) for k in range(8)),
             item(780, "The mechanic fits a new tyre on the red car.", 0.5), quiet]
    options = ["No one is in the frame", "The mechanic jacks up the car", "The mechanic fits a tyre"]
    assert language.answer("What goes on from 10:00 to 13:00 in the garage?", options, video).answer == options[0]
    assert language.answer("What is happening around 11:20 in the garage?", options, video).answer == options[0]
    assert language.answer("What is happening around 01:20 in the garage?", options, video).answer == options[1]


@pytest.mark.parametrize(
    ("question", "hours"),
    [("Which chores filled day 2 between 2 pm and half past four?", [(38.0, 40.5)]),
     ("What was the third day like from noon to 5 p.m.?", [(60.0, 65.0)]),
     ("How did the first day go from 9 p.m. on?", [(21.0, 24.0)]),
     ("What has Tomas cooked since 4 pm on day 3?", [(64.0, 72.0)]),
     ("What went on from 10:00 onwards on DAY2?", [(34.0, 48.0)]),
     ("Between 11:15 and 11:45 on day 1, who came in?", [(11.25, 11.75)]),
     ("Where were the gloves at noon on day 2?", []),
     ("What did Ana do after 3 pm on day 1?", [])],
)
def test_two_times_of_day_in_any_form_or_one_said_to_run_on_name_a_stretch(question: str,
                                                                            hours: list[tuple[float, float]]) -> None:
    """Times said in words ("2 pm", "half past four", "noon") join into a stretch as digits do;
    "from 9 p.m. on" and "since 4 pm" run to the end of the day; one time alone is a moment."""
    day = question_window(question)
    assert [(a / 3600, b / 3600) for a, b in question_stretches(question, day)] == hours


def test_a_summary_is_the_option_whose_every_part_the_stretch_shows(language: OfflineLanguage) -> None:
    """An option that lists a stretch's happenings is the summary when the stretch shows each
    of them and they fill its footage; one that shares the longest happening but names two the
    stretch never showed is not, however alike its words are to one sentence."""
    evening = [Evidence(18 * 3600, 18 * 3600 + 2400, "Priya mows the lawn. The scene is still.", "episodic", 0.8, "v",
                        scale=3600.0),
               item(19 * 3600, "Priya waters the roses by the fence.", 0.7),
               item(20 * 3600, "Priya grills corn on the barbecue.", 0.6),
               item(12 * 3600, "Priya paints the shed door.", 0.9)]
    options = ["Mowing the lawn, watering the roses, grilling corn", "Mowing the lawn and a nap",
               "Painting the shed, a phone call, a nap", "Grilling corn"]
    assert language.answer("What was the evening mostly about?", options, evening).answer == options[0]


def test_a_long_window_over_a_stretch_tells_it_by_its_finer_captions_inside(language: OfflineLanguage) -> None:
    """A 10-min window that overlaps "from minute 12 to minute 16" holds, in its own summary,
    the crane that its finer captions put after minute 16: the footage holding a word is that of
    the window's intervals that say it, and only their part inside the stretch counts."""
    window = Evidence(600, 1200, "The ferry docks. Passengers board with bikes. The captain sounds the horn. "
                      "A crane lifts a container.", "episodic", 0.9, "v", scale=600.0,
                      intervals=(Span(600, 720, "The ferry docks at the pier."),
                                 Span(720, 1000, "Passengers board with bikes. The captain sounds the horn."),
                                 Span(1000, 1200, "A crane lifts a container.")))
    harbour = [window, item(300, "Gulls circle over the harbour.", 0.4)]
    options = ["A crane lifts a container", "Passengers board with bikes and the captain sounds the horn",
               "Gulls circle over the harbour", "The ferry docks and gulls circle"]
    for question in ("What occurred from minute 12 to minute 16?", "Which best describes the stretch between 12:30 and 16:30?"):
        assert language.answer(question, options, harbour).answer == options[1], question
    assert language.answer("What went on between the 17-minute mark and the 19-minute mark?", options, harbour).answer \
        == options[0]


def test_a_part_of_the_recording_or_its_end_is_read_from_where_the_items_lie(language: OfflineLanguage) -> None:
    """"The last part of the video" is its last third, "the opening section" its first; "how
    does the film end?" asks for its latest item, not for the items most alike."""
    film = [item(0, "A title card shows the harbour.", 0.3), item(600, "Fishermen unload crates on the quay.", 0.7),
            item(1300, "A gull steals a fish from a crate.", 0.4), item(1500, "The fishermen wave to the camera.", 0.2)]
    options = ["A gull steals a fish", "Fishermen unload crates", "A title card", "The fishermen wave"]
    assert language.answer("What happens in the last part of the video?", options, film).answer == options[0]
    assert language.answer("What is seen in the opening section of the film?", options, film).answer == options[2]
    assert language.answer("How does the film end?", options, film).answer == options[3]


def test_the_middle_of_the_recording_is_its_middle_third(language: OfflineLanguage) -> None:
    film = [item(1700, "End credits scroll over the harbour.", 0.7), item(0, "A title card shows the harbour.", 0.6),
            item(840, "Fishermen unload crates of fish on the quay.", 0.4), item(1740, "The credits end.", 0.5)]
    options = ["Fishermen unload fish", "The credits scroll", "A title card"]
    assert language.answer("What is shown halfway through the film?", options, film).answer == options[0]
    assert language.answer("What is shown in the middle of the video?", options, film).answer == options[0]


# ---------------------------------------------------------------- a clause that places the question


def test_a_clause_places_what_is_asked_before_or_after_another_happening(language: OfflineLanguage) -> None:
    """The happening a clause names ("right after watering the tomatoes") is found by its
    words; what is asked is read beside it in time, not where the question's words are most
    alike."""
    morning = [item(120, "Omar sweeps the greenhouse path.", 0.8), item(300, "Omar sweeps the path again.", 0.7),
               item(0, "Omar waters the tomatoes in the greenhouse.", 0.6),
               item(60, "Omar repots a fern on the bench.", 0.5), item(180, "Omar feeds the fish in the pond.", 0.4)]
    options = ["Repotted a fern", "Watered the tomatoes", "Swept the path", "Fed the fish"]
    assert language.answer("What did Omar do just after watering the tomatoes?", options, morning).answer == options[0]
    assert language.answer("What did Omar do right before he fed the fish?", options, morning).answer == options[2]


def test_a_happening_placed_by_a_clause_is_where_its_finest_item_shows_it(language: OfflineLanguage) -> None:
    """A 10-min window that names the happening ends long after it: what comes right after the
    happening is beside the clip that shows it, not beside the window's end."""
    kitchen = [Evidence(0, 600, "Omar peels potatoes, chops onions and fries them.", "episodic", 0.6, "v", scale=600.0),
               item(120, "Omar chops onions on the board.", 0.5), item(180, "Omar fries the onions in a pan.", 0.4),
               item(600, "Omar sets the table for lunch.", 0.7), item(0, "Omar peels potatoes at the sink.", 0.3)]
    options = ["Fried the onions", "Set the table", "Peeled potatoes"]
    assert language.answer("What did Omar do right after chopping the onions?", options, kitchen).answer == options[0]


def test_what_came_right_after_is_the_nearest_item_that_tells_something_new(language: OfflineLanguage) -> None:
    """Between the kettle boiling and the tea being poured, three windows show the same kitchen
    sign and nothing new: the next happening is the tea, not what those windows' words say (the
    kitchen). And what came before the kettle, however plainly it was shown, is not what came
    after it."""
    def clip(t: float, text: str, score: float = 1.0) -> Evidence:
        return item(t, text, score, length=10.0)
    same = "A sign reads 'KITCHEN'. The scene is mostly white."
    kitchen = [clip(600, "A sign reads 'KITCHEN'. A caption reads 'THE KETTLE BOILS'. The scene is mostly white."),
               *[clip(t, same) for t in (610, 620, 630)], clip(640, "A sign reads 'KITCHEN'. A caption reads 'INES POURS TEA'."),
               clip(650, same), *[clip(t, "A sign reads 'OFFICE'. A caption reads 'INES READS THE PAPER'.", 0.9) for t in (300, 310)]]
    options = ["Ines pouring tea", "Ines reading the paper", "The kitchen number", "Ines wiping the counter"]
    assert language.answer("What is shown right after the kettle boils?", options, kitchen).answer == options[0]


def test_the_clip_that_starts_a_window_comes_before_the_rest_of_the_window(language: OfflineLanguage) -> None:
    """An hour's window that starts where the next clip does holds that clip's happening and a
    later one: what came right after is the clip's, not the window's later happening."""
    hour = Evidence(5400, 7200, "Jonas feeds the hens. Later Jonas sweeps the porch.", "episodic", 1.0, "v", scale=3600.0)
    farm = [item(1800, "Jonas unloads the hay bales from the trailer.", 0.6), hour,
            item(5400, "Jonas feeds the hens in the yard.", 0.5), item(7000, "Jonas sweeps the porch.", 0.4)]
    options = ["Gave the hens their feed", "Swept the porch", "Unloaded the hay", "Milked the goat"]
    assert language.answer("What did Jonas do right after unloading the hay?", options, farm).answer == options[0]


def test_which_came_first_is_read_from_the_times_not_from_a_caption_saying_comes(language: OfflineLanguage) -> None:
    """"Which came first?" asks for the earliest option; "came" is no word to look for, and the
    caption that says "comes round" does not support its option for it."""
    day = [item(9 * 3600, "Maya bakes bread in the kitchen.", 0.5), item(13 * 3600, "Maya repairs the bike.", 0.5),
           item(17 * 3600, "Uncle Sam comes round for tea.", 0.9)]
    options = ["Uncle Sam's visit", "Baking bread", "Repairing the bike"]
    assert language.answer("Which of these came first on the first day?", options, day).answer == options[1]


def test_a_yes_or_no_question_is_answered_by_whether_one_item_holds_all_it_says(language: OfflineLanguage) -> None:
    """Yes when one item holds every word of what the question says happened (beside the
    happening a clause places it before or after, when one does); no when none does, though
    items hold some of its words."""
    shed = [item(0, "Lena sands the table in the shed.", 0.5), item(300, "Lena sweeps the shed floor.", 0.6),
            item(600, "Lena paints the shed door green.", 0.4)]
    said = ["Yes, she did", "No, she didn't"]
    assert language.answer("Did Lena sand the table?", said, shed).answer == said[0]
    assert language.answer("Did Lena paint the table?", said, shed).answer == said[1]
    assert language.answer("Did Lena sweep the floor after she sanded the table?", ["Yes", "No"], shed).answer == "Yes"
    assert language.answer("Did Lena sweep the floor before sanding the table?", ["Yes", "No"], shed).answer == "No"


def test_me_is_the_one_the_first_person_caption_says_did_it(language: OfflineLanguage) -> None:
    """In the camera wearer's captions "I" did it: the option "Me" is found where a sentence says
    "I" as a name is where it is named, and is not put below the names by how a bare pronoun
    embeds. A name beside the happening in a line of speech is not who did it."""
    day = [
        Evidence(100, 130, "I carry the recycling bin to the gate. Noor: The truck comes at seven.", "episodic", 0.6, "v",
                 speech=(Speech(110, 112, "The truck comes at seven.", "Noor"),)),
        item(400, "Noor and I water the tomatoes in the greenhouse.", 0.5),
        item(700, "Bilal fixes the gate latch.", 0.4),
    ]
    options = ["Noor", "Bilal", "Me", "Dana"]
    assert language.answer("Who took the recycling bin out to the gate?", options, day).answer == "Me"
    assert language.answer("Who fixed the latch on the gate?", options, day).answer == "Bilal"


def test_a_count_of_people_is_of_those_named_where_it_happened(language: OfflineLanguage) -> None:
    """The people named in the item that holds the happening, speakers too; the camera's wearer
    ("I") is one of them unless the question counts the others ("with me", "did I …")."""
    day = [
        item(100, "I play cards with Noor, Bilal and Dana on the balcony.", 0.6),
        Evidence(900, 930, "I carry drinks to the balcony. Yusuf: Deal me in next round.", "episodic", 0.5, "v",
                 speech=(Speech(905, 907, "Deal me in next round.", "Yusuf"),)),
        item(2000, "I cycle to the market with Dana.", 0.5),
    ]
    options = ["1", "2", "3", "4"]
    assert language.answer("How many people played cards with me?", options, day).answer == "3"
    assert language.answer("How many of us played cards?", options, day).answer == "4"
    assert language.answer("How many different people cycled to the market?", options, day).answer == "2"
    assert language.answer("How many others did I cycle to the market with?", options, day).answer == "1"


def test_inside_said_of_the_verb_is_where_the_thing_went(language: OfflineLanguage) -> None:
    """"inside" is what the question asks about here, not a place word an option might carry:
    the clip of the chairs going inside answers, not the clip retrieved first."""
    yard = [item(600, "A neighbour leaves folding chairs by the gate.", 0.8),
            item(1200, "Noor lifts the folding chairs and takes them inside.", 0.5),
            item(1800, "Bilal waters the hedge.", 0.4)]
    options = ["The neighbour", "Noor", "Bilal"]
    assert language.answer("Who carried the seats inside?", options, yard).answer == "Noor"


def test_a_yes_or_no_question_is_read_at_the_time_it_names_and_hears_a_negation(language: OfflineLanguage) -> None:
    """Yes only from an item at the time the question names, and not from a sentence that says
    nobody did it: the hallway's idle window says no one walked there between 14:30 and 15:30."""
    hall = [Evidence(14 * 3600, 16 * 3600, "The hallway is empty; nobody walks down the hallway.", "episodic", 0.7, "v",
                     scale=3600.0),
            item(13 * 3600 + 600, "Lena walks down the hallway with a basket.", 0.6),
            item(16 * 3600 + 1800, "Lena walks down the hallway to the door.", 0.5),
            item(9 * 3600, "Lena did not water the ferns; she forgot.", 0.4)]
    said = ["Yes", "No"]
    assert language.answer("Did anyone walk down the hallway between 14:30 and 15:30?", said, hall).answer == "No"
    assert language.answer("Did Lena walk down the hallway around 13:10?", said, hall).answer == "Yes"
    assert language.answer("Did Lena water the ferns?", said, hall).answer == "No"


def test_a_habit_that_changed_is_read_over_the_days_when_a_part_of_the_day_is_named(language: OfflineLanguage) -> None:
    """The old habit of the mornings is that of the earliest days, not of the earliest hour of
    any morning (the new tea is drunk an hour earlier than the old coffee was)."""
    mornings = [item(d * DAY + 8 * 3600, "Sam drinks coffee by the window.", 0.5) for d in range(3)]
    mornings += [item(d * DAY + 7 * 3600, "Sam drinks mint tea by the window.", 0.6) for d in range(3, 5)]
    options = ["Coffee", "Mint tea", "Juice", "Water"]
    assert language.answer("What did Sam use to drink in the morning?", options, mornings).answer == "Coffee"
    assert language.answer("What does Sam drink in the mornings these days?", options, mornings).answer == "Mint tea"


def test_how_many_days_counts_the_days_the_happening_was_recorded_on(language: OfflineLanguage) -> None:
    walks = [item(1 * DAY + 7 * 3600, "Sam walks the dog along the canal.", 0.5),
             item(2 * DAY + 7 * 3600, "Sam walks the dog along the canal.", 0.5),
             item(2 * DAY + 7 * 3600 + 30, "Sam walks the dog past the lock.", 0.5),
             item(5 * DAY + 18 * 3600, "Sam walks the dog in the rain.", 0.5),
             item(3 * DAY + 9 * 3600, "Sam feeds the dog.", 0.6)]
    options = ["1", "2", "3", "4", "5"]
    assert language.answer("On how many days did Sam walk the dog?", options, walks).answer == "3"
    assert language.answer("On how many days did Sam walk the dog?", options, walks[:3]).answer == "2"
    assert language.answer("On how many days did Sam walk the dog?", options, walks[1:]).answer == "2"


def test_a_noun_made_of_a_verb_is_found_where_the_verb_is(language: OfflineLanguage) -> None:
    """"The argument" is where someone argues, "the delivery" where something is delivered:
    endings the stemmer keeps ("-ment", "-ery", "-ure") are taken off a noun's key."""
    assert root("argument") == root("argues") and root("delivery") == root("delivered")
    assert root("departure") == root("departs") and root("payment") == root("paying")
    day = [item(600, "Sam argues with the courier about the fee.", 0.6), item(0, "The courier delivers a box to Sam.", 0.3)]
    options = ["The argument", "The delivery"]
    assert language.answer("Which came first, the argument or the delivery?", options, day).answer == "The delivery"
    later = [replace(day[0], t_start=0, t_end=30), replace(day[1], t_start=600, t_end=630)]
    assert language.answer("Which came first, the argument or the delivery?", options, later).answer == "The argument"


def test_the_recording_a_question_names_is_no_word_to_look_for(language: OfflineLanguage) -> None:
    """"The last minutes of the video" is a stretch of the recording; a clip that shows a video
    on a screen is not about it for that word."""
    match = [item(300, "The big screen shows a video of last year's final.", 0.6),
             *(item(30 * k, "Two teams warm up on the pitch.", 0.5) for k in range(6)),
             item(1500, "The stadium lights switch off over the empty stands.", 0.3)]
    options = ["The lights switch off", "A video of last year's final plays", "The teams warm up"]
    assert language.answer("What happens in the last few minutes of the video?", options, match).answer == options[0]


def test_a_day_or_a_meal_said_of_what_is_asked_places_it_there(language: OfflineLanguage) -> None:
    """"Yesterday" said of what the question asks is the day before the query time, "for
    dinner" the hours of dinner: today's dinner, the only item that says "dinner", is not
    yesterday's, nor is yesterday's breakfast."""
    now = 3 * DAY + 21 * 3600
    meals = [item(2 * DAY + 20 * 3600 + 1800, "Ravi and I ate grilled fish on the porch.", 0.5),
             item(2 * DAY + 8 * 3600, "I made pancakes in the kitchen.", 0.5),
             item(3 * DAY + 18 * 3600 + 1800, "We had dinner together; Ravi cooked a lentil curry.", 0.6)]
    options = ["Grilled fish", "Lentil curry", "Pancakes", "Soup"]
    assert language.answer("What did we eat for dinner yesterday?", options, meals, now=now).answer == "Grilled fish"
    assert language.answer("What did we eat for dinner tonight?", options, meals, now=now).answer == "Lentil curry"
    # the last dinner is the latest day's, not the one eaten latest in the evening
    assert language.answer("What did I last eat for dinner?", options, meals, now=now).answer == "Lentil curry"


def test_what_one_person_did_is_read_from_the_clause_they_are_the_subject_of(language: OfflineLanguage) -> None:
    """One sentence, two people, two things: what I bought is in the clause whose subject is
    "I", what Noor bought in hers."""
    bakery = [item(1000, "At the bakery Noor bought a rye loaf and I bought two croissants.", 0.6),
              item(1100, "Ravi and I carried the bags to the car.", 0.5)]
    options = ["A rye loaf", "Croissants", "A baguette", "Muffins"]
    assert language.answer("What did I buy at the bakery?", options, bakery).answer == "Croissants"
    assert language.answer("What did Noor buy at the bakery?", options, bakery).answer == "A rye loaf"


def test_what_a_stretch_was_mostly_about_is_what_most_of_its_footage_shows(language: OfflineLanguage) -> None:
    """A summary is what most of the footage of the stretch asked about shows: the hour-long
    window and the clips of painting, not the one clip that names the bakery run or the
    evening's phone call, which say their options' words as plainly."""
    now = 2 * DAY + 20 * 3600
    day = [item(DAY + 11 * 3600, "I buy bread at the bakery.", 0.7),
           item(2 * DAY + 9 * 3600, "I buy bread at the bakery and chat with the baker.", 0.7),
           item(DAY + 19 * 3600, "I call my brother to talk about the fence.", 0.6),
           item(DAY + 8 * 3600, "I drink a glass of water.", 0.5),
           Evidence(DAY + 9 * 3600, DAY + 10 * 3600, "A morning of painting the fence in the back garden.", "episodic",
                    0.4, "v", scale=3600.0),
           *[item(DAY + 9 * 3600 + 30 * k, "I paint the fence with a wide brush.", 0.4) for k in range(3)]]
    options = ["Painting the fence", "Buying bread", "A phone call", "Gardening"]
    assert language.answer("What was yesterday morning mostly about?", options, day, now=now).answer == "Painting the fence"
    assert language.answer("Which best sums up yesterday morning?", options, day, now=now).answer == "Painting the fence"


def test_the_time_from_the_first_to_the_last_occasion_is_measured_between_their_starts(language: OfflineLanguage) -> None:
    """"Lena's first and last lap" is one happening: the time from the start of its first
    occasion to the start of its last, not between any two items naming Lena or a lap."""
    pool = [item(1400, "Lena swims a lap of the pool.", 0.9), item(200, "Lena swims a lap of the pool.", 0.8),
            item(900, "Lena swims a lap of the pool.", 0.7), item(600, "Lena dries her hair by the lockers.", 0.6)]
    options = ["About 20 minutes", "About 12 minutes", "About 8 minutes", "About 2 minutes"]
    assert language.answer("How much time went by between Lena's first and last lap of the pool?", options, pool).answer \
        == options[0]


def test_a_count_at_a_named_time_counts_only_what_lies_there(language: OfflineLanguage) -> None:
    """Tea made today, asked at 18:00 on the third day, is the two cups of that day, not the
    four of the three days."""
    now = 2 * DAY + 18 * 3600
    tea = [item(d * DAY + h * 3600, "I make a cup of tea in the kitchen.", 0.5) for d, h in ((0, 9), (1, 15), (2, 8), (2, 16))]
    options = ["1", "2", "3", "4"]
    assert language.answer("How many cups of tea did I make today?", options, tea, now=now).answer == "2"
    assert language.answer("How many cups of tea did I make yesterday?", options, tea, now=now).answer == "1"
    assert language.answer("How many cups of tea did I make in all?", options, tea, now=now).answer == "4"


def test_a_summary_of_a_stretch_is_told_by_the_words_that_set_it_apart(language: OfflineLanguage) -> None:
    """The bread is in every part of this baking video, so it does not tell the last third from
    the first: what only the last third shows (eating, tidying) does."""
    def clip(minute: float, text: str) -> Evidence:
        return Evidence(minute * 60, minute * 60 + 30, text, "episodic", 0.5, "v")
    video = [*[clip(m / 2, "She buys flour and yeast for the bread at the shop.") for m in range(12)],
             *[clip(6 + m / 2, "She kneads the bread dough on the table.") for m in range(12)],
             *[clip(12 + m / 2, "The family eats the warm bread at the table.") for m in range(8)],
             *[clip(16 + m / 2, "She tidies the kitchen and wipes the table.") for m in range(4)]]
    options = ["She buys the bread", "The loaf is eaten and she tidies up", "She bakes a cake", "She goes for a run"]
    assert language.answer("What happens in the last third of the video?", options, video).answer \
        == "The loaf is eaten and she tidies up"


def test_a_short_sentence_is_about_the_question_as_far_as_its_neighbours_say(language: OfflineLanguage) -> None:
    """A caption told in short sentences says where the thermos came from in one sentence and
    whom it was filled for in the next: the question's words within `NEAR` words of the option's
    count across the full stop (at half the weight of those in its own sentence), as they do
    inside one long sentence."""
    kitchen = [item(600, "A red thermos stands on the kitchen shelf.", 0.7),
               item(900, "I took the thermos from the cupboard by the stairs. Filled it for Omar.", 0.5)]
    options = ["The cupboard by the stairs", "The kitchen shelf", "The car boot", "Omar's backpack"]
    assert language.answer("Where did the thermos I filled for Omar come from?", options, kitchen).answer \
        == "The cupboard by the stairs"


def test_a_little_while_ago_asks_for_the_latest_occasion(language: OfflineLanguage) -> None:
    """"A moment ago", "a little while ago": the latest time Nadia handed me something, though
    the older one is retrieved first."""
    desk = [item(1000, "Nadia hands me the stapler across the desk.", 0.8),
            item(5000, "Nadia hands me the scissors across the desk.", 0.5)]
    options = ["The stapler", "The scissors", "The tape", "The glue"]
    for question in ("What did Nadia hand me a moment ago?", "A little while ago, what did Nadia hand me?"):
        assert language.answer(question, options, desk, now=5400).answer == "The scissors", question


def test_who_said_it_is_told_by_what_was_said_not_by_when(language: OfflineLanguage) -> None:
    """The clause placing the question ("while I was repotting the cracked fern") is not what
    was said: Dev's line says the clay, Priya's only the fern and the crack."""
    lines = (Speech(40, 43, "oh no, the fern pot is cracked", speaker="Priya"),
             Speech(44, 46, "that is not real clay anyway", speaker="Dev"))
    porch = [replace(item(30, "We kneel on the porch around the fern.", 0.7), speech=lines)]
    options = ["Priya", "Dev", "Omar", "Lena"]
    question = "While I was repotting the cracked fern, who said the pot was not real clay?"
    assert language.answer(question, options, porch).answer == "Dev"


def test_where_something_was_put_is_where_the_sentence_that_puts_it_says(language: OfflineLanguage) -> None:
    """"Put", "take", "give" are spaCy stopwords but say what happened: the scissors were put in
    the drawer, only seen on the desk."""
    study = [item(100, "I see the scissors on the desk next to the lamp.", 0.8),
             item(700, "I put the scissors in the drawer.", 0.5)]
    options = ["On the desk", "In the drawer", "On the shelf", "In the bin"]
    assert language.answer("Where did I put the scissors?", options, study).answer == "In the drawer"


def test_a_number_written_as_a_word_holds_the_option_in_digits(language: OfflineLanguage) -> None:
    """"Sold for seven coins" holds "7 coins", and "7 cups" the option "Seven"."""
    auction = [item(100, "The lamp goes up for auction and is sold for seven coins.", 0.5),
               item(400, "Mo jokes that he would resell the lamp for 20 coins.", 0.7)]
    options = ["7 coins", "20 coins", "3 coins", "10 coins"]
    assert language.answer("What did the lamp sell for at the auction?", options, auction).answer == "7 coins"
    cafe = [item(100, "Ines carries 7 cups of tea to the terrace.", 0.5),
            item(400, "Ines wipes two tables on the terrace.", 0.7)]
    assert language.answer("How many cups of tea did Ines carry to the terrace?", ["Two", "Seven", "Four", "Nine"],
                           cafe).answer == "Seven"


@pytest.mark.parametrize(
    ("question", "hours"),
    [
        ("Around a quarter past three, what was I carrying?", [3.25, 15.25]),
        ("Who rang at half past ten?", [10.5, 22.5]),
        ("What did we cook at 7 pm?", [19.0]),
        ("Where was the van at 10:30 a.m.?", [10.5]),
        ("Who left just before four, the baker or the cook?", [4.0, 16.0]),
        ("What did I do at quarter to five?", [4.75, 16.75]),
        ("What happened at six o'clock?", [6.0, 18.0]),
    ],
)
def test_a_time_of_day_said_in_words_is_read_as_its_hours(question: str, hours: list[float]) -> None:
    (said,) = spoken_clocks(question)
    assert [t / 3600 for t in said[1]] == hours


@pytest.mark.parametrize("question", ["Who sat at four tables?", "How many of the four cups broke?",
                                      "What did I buy at the market?"])
def test_a_number_that_names_no_time_of_day_is_none(question: str) -> None:
    assert spoken_clocks(question) == []


def test_a_time_of_day_is_the_last_one_before_the_question(language: OfflineLanguage) -> None:
    """"Around a quarter past three" asked at 16:00 on the second day is that afternoon's 15:15
    (said in words, give or take a few minutes), and "at 10:30" that morning's: not the first
    day's, nor whatever the best-ranked item shows."""
    now = DAY + 16 * 3600
    days = [item(DAY + 11 * 3600, "I carry the laundry basket upstairs.", 0.9),
            item(15 * 3600 + 900, "I carry a ladder to the shed.", 0.7),
            item(DAY + 15 * 3600 + 780, "I carry a crate of apples to the kitchen.", 0.5),
            item(10 * 3600 + 1800, "I water the tomatoes in the greenhouse.", 0.8),
            item(DAY + 10 * 3600 + 1800, "I sweep the porch steps.", 0.4)]
    options = ["A ladder", "A crate of apples", "The laundry basket", "A bicycle"]
    assert language.answer("Around a quarter past three, what was I carrying?", options, days, now=now).answer \
        == "A crate of apples"
    chores = ["Watering the tomatoes", "Sweeping the porch", "Carrying the laundry", "Washing the car"]
    assert language.answer("What was I doing at 10:30?", chores, days, now=now).answer == "Sweeping the porch"


# ---------------------------------------------------------------- one clock, days and stretches named


def _on(video: str, t: float, text: str, score: float = 0.5, source: str = "episodic") -> Evidence:
    return Evidence(t, t + 30, text, source, score, video)


def test_before_and_after_are_read_across_the_files_of_one_week(language: OfflineLanguage) -> None:
    """An EgoLife week is one clock over many files (`timeline.clock_of`): what came just before
    a happening is the nearest item before it in any file of the week. And "on DAY2" places the
    question; it is no word an item must hold (a fact that prints its dates holds "DAY2")."""
    evidence = [
        _on("DAY2_B3_NOOR_18000000", DAY + 18 * 3600, "Noor locks the shed.", 0.9),
        _on("DAY2_B3_NOOR_17300000", DAY + 17.5 * 3600, "Noor hangs the washing on the line.", 0.6),
        _on("DAY2_B3_NOOR_16000000", DAY + 16 * 3600, "Noor repots the fern.", 0.7),
        _on("DAY2_B3_NOOR_19000000", DAY + 19 * 3600, "Noor feeds the goats.", 0.8),
        _on("DAY2_B3_NOOR_18000000", DAY + 18 * 3600,
            "Noor lock shed. Known since DAY2 18:00:30; seen at DAY1 18:00:00, DAY2 18:00:00.", 0.5, "semantic"),
    ]
    options = ["Feeding the goats", "Hanging the washing", "Repotting the fern", "Painting the gate"]
    now = DAY + 20 * 3600
    assert language.answer("Just before Noor locked the shed on DAY2, what was she doing?", options, evidence,
                           now=now).answer == "Hanging the washing"
    assert language.answer("Right after Noor locked the shed on DAY2, what did she do?", options, evidence,
                           now=now).answer == "Feeding the goats"


def test_which_day_something_happened_is_the_day_its_evidence_lies_on(language: OfflineLanguage) -> None:
    """Options that name days by number are read from where the evidence about the question
    lies; one that says it did not happen wins only where nothing about it is found, one that
    says every day where something is found on each; asked where it did not happen, the day
    with nothing about it."""
    swims = [_on(f"DAY{d}_C1_RAVI_07000000", (d - 1) * DAY + 7 * 3600, "Ravi swims laps at the lido.", 0.8)
             for d in (1, 3)]
    fence = _on("DAY2_C1_RAVI_15000000", DAY + 15 * 3600, "Ravi mends the fence by the gate.", 0.7)
    chores = [_on(f"DAY{d}_C1_RAVI_12000000", (d - 1) * DAY + 12 * 3600, "Ravi chops onions for lunch.", 0.4)
              for d in (1, 2, 3)]
    evidence = [*swims, fence, *chores]
    now = 2 * DAY + 22 * 3600
    days = ["Day 1", "Day 2", "Day 3"]
    assert language.answer("On which day did Ravi mend the fence?", [*days, "He has not mended it"], evidence,
                           now=now).answer == "Day 2"
    assert language.answer("Which day did Ravi not go swimming?", [*days, "He swam every day"], evidence,
                           now=now).answer == "Day 2"
    every = [*swims, _on("DAY2_C1_RAVI_07000000", DAY + 7 * 3600, "Ravi swims laps at the lido.", 0.8), *chores]
    assert language.answer("Which day did Ravi not go swimming?", [*days, "He swam every day"], every,
                           now=now).answer == "He swam every day"


def test_a_time_on_a_named_day_is_that_days_clock(language: OfflineLanguage) -> None:
    """"Around 09:00 on Day 2" is that morning of that day, not 09:00 of any day."""
    evidence = [_on("DAY2_C1_RAVI_09000000", DAY + 9 * 3600, "Ravi bakes rye bread.", 0.8),
                _on("DAY1_C1_RAVI_09000000", 9 * 3600, "Ravi irons his shirts.", 0.6),
                _on("DAY2_C1_RAVI_13000000", DAY + 13 * 3600, "Ravi bakes a lemon tart.", 0.5)]
    options = ["Day 1, around 09:00", "Day 2, around 09:00", "Day 2, around 13:00", "Day 1, around 13:00"]
    assert language.answer("When did Ravi bake the rye bread?", options, evidence, now=2 * DAY).answer \
        == "Day 2, around 09:00"


def test_how_long_after_one_happening_another_came(language: OfflineLanguage) -> None:
    """"How long after X did Y?" is the time from X's evidence to Y's, not how long either lasted."""
    evidence = [item(600, "Noor slides the loaf into the oven.", 0.8),
                item(600 + 25 * 60, "Noor takes the loaf out of the oven and sets it on the rack.", 0.7),
                item(3000, "Noor waters the basil.", 0.5)]
    options = ["About 30 seconds", "About 25 minutes", "About an hour", "About 2 hours"]
    assert language.answer("How many minutes after the loaf went into the oven did Noor take it out?", options,
                           evidence).answer == "About 25 minutes"


def test_where_something_is_at_a_mark_of_the_recording_is_where_it_was_last_put(language: OfflineLanguage) -> None:
    evidence = [item(120, "The umbrella hangs on the hook by the door.", 0.6),
                item(480, "The umbrella is put in the stand.", 0.5),
                item(900, "The umbrella is thrown onto the back seat of the car.", 0.9)]
    options = ["On the hook", "In the stand", "In the car", "Under the bench"]
    assert language.answer("At the 10-minute mark, where is the umbrella?", options, evidence).answer \
        == "In the stand"


def test_the_first_minutes_of_a_video_start_at_its_start(language: OfflineLanguage) -> None:
    """A single video starts at 0, however late the first item found of it lies."""
    evidence = [item(t, "Ravi sneezes into his sleeve.", 0.6) for t in (90, 180, 300, 540)]
    assert language.answer("In the first four minutes, how many times does Ravi sneeze?", ["1", "2", "3", "4"],
                           evidence).answer == "2"


def test_what_happens_between_two_marks_of_the_recording(language: OfflineLanguage) -> None:
    evidence = [item(100, "A cyclist fixes a flat tyre.", 0.6), item(300, "A dog chases a ball across the lawn.", 0.7),
                item(420, "A man fills a kettle at the tap.", 0.5), item(500, "A woman reads a map on a bench.", 0.4),
                item(700, "A bus stops and two people get off.", 0.8)]
    options = ["A tyre is fixed and a bus stops", "A dog chases a ball, a kettle is filled and a map is read",
               "A bus stops, a dog chases a ball and a tyre is fixed", "A woman reads a map and a cyclist rides off"]
    assert language.answer("What happens between minute 4 and minute 9?", options, evidence).answer == options[1]


def test_which_happening_came_most_or_least_often_is_counted_in_moments(language: OfflineLanguage) -> None:
    """"Which … the most times?" is the option seen at the most separate moments, a fact's
    typed supporting moments among them (the best-ranked item says nothing of how often)."""
    fact = Evidence(5000, 5030, "Noor sharpen knives. Known since 00:20:00; seen at three times.", "semantic", 0.9, "v",
                    moments=((1200, 1230, "noor sharpen knives"), (3000, 3030, "noor sharpen knives"),
                             (5000, 5030, "noor sharpen knives")))
    evidence = [item(400, "Noor mops the hallway floor.", 0.95), item(2600, "Noor mops the hallway floor again.", 0.7),
                fact, item(4200, "Noor oils the hinges of the gate.", 0.5)]
    options = ["Mopping the floor", "Sharpening the knives", "Oiling the hinges", "Feeding the goats"]
    assert language.answer("Which of these chores did Noor do the most times?", options, evidence).answer \
        == "Sharpening the knives"
    assert language.answer("Which chore did Noor do the fewest times?", options, evidence).answer == "Oiling the hinges"
    assert language.answer("In the first 30 minutes, which chore did Noor do the most times?", options,
                           evidence).answer == "Mopping the floor", "only the moments at the time named count"


def test_what_happened_every_day_is_the_option_shown_on_the_most_days(language: OfflineLanguage) -> None:
    """A habit is told by the days it comes back on, a fact's typed moments among them: the goats
    are fed on all three days, the floor is mopped four times on the first alone."""
    fed = Evidence(2 * DAY + 7 * 3600, 2 * DAY + 7 * 3600 + 30, "Noor feed goats. Known since day 1; seen twice.",
                   "semantic", 0.6, "v", moments=((DAY + 7 * 3600, DAY + 7 * 3600 + 30, "noor feed goats"),
                                                  (2 * DAY + 7 * 3600, 2 * DAY + 7 * 3600 + 30, "noor feed goats")))
    evidence = [*(item(9 * 3600 + k * 1800, "Noor mops the hallway floor.", 0.9) for k in range(4)),
                item(7 * 3600, "Noor feeds the goats by the barn.", 0.4), fed,
                item(DAY + 10 * 3600, "Noor oils the hinges of the gate.", 0.5),
                item(2 * DAY + 10 * 3600, "Noor oils the hinges of the gate.", 0.5)]
    options = ["Mopping the floor", "Feeding the goats", "Oiling the hinges", "Baking bread"]
    assert language.answer("Which of these did Noor do on each of the three days?", options, evidence).answer \
        == "Feeding the goats"
    assert language.answer("Which chore did Noor take care of daily?", options, evidence).answer == "Feeding the goats"
    assert language.answer("Which chore did Noor do the most times?", options, evidence).answer == "Mopping the floor"


def test_a_summary_naming_two_happenings_is_covered_by_a_window_that_tells_them_apart(language: OfflineLanguage) -> None:
    """An hour's window tells the afternoon's two happenings in sentences of their own: the
    option naming both is what the window covers, not the one that shares its first happening
    with one sentence and adds one the afternoon never showed."""
    hour = Evidence(DAY + 14 * 3600, DAY + 15 * 3600, "Marta repots the tomato seedlings on the balcony. "
                    "The cat knocks over a can.", "episodic", 0.6, "v", scale=3600.0)
    clip = Evidence(DAY + 14 * 3600, DAY + 14 * 3600 + 30, "Marta repots the tomato seedlings on the balcony.",
                    "episodic", 0.6, "v")
    options = ["Seedlings were repotted and the cat knocked a can over",
               "Seedlings were repotted and Marta napped",
               "The balcony was swept",
               "The lawn was watered"]
    question = "What happened between 14:00 and 15:00 on the second day?"
    assert language.answer(question, options, [hour, clip]).answer == options[0]


def test_the_last_time_asked_while_it_happens_again_is_the_occasion_before_this_one(language: OfflineLanguage) -> None:
    """"Now that I'm painting the fence again": the clip of ten minutes ago is this occasion,
    and the last time is the one before it; without "now" the latest occasion is the last."""
    evidence = [
        item(NOW - 600, "I paint the fence while Omar holds the ladder.", 0.9),
        item(NOW - 570, "I paint the fence, Omar hands me the brush.", 0.8),
        item(2 * DAY + 11 * 3600, "I paint the fence and Lena holds the ladder.", 0.7),
    ]
    options = ["Priya", "Omar", "Lena", "Sam"]
    for question in ("Now that I'm painting the fence again, who held the ladder the last time I painted it?",
                     "I am painting the fence now. Who held the ladder the last time I painted the fence?"):
        assert language.answer(question, options, evidence, now=NOW).answer == "Lena", question
    assert language.answer("Who held the ladder the last time I painted the fence?", options, evidence,
                           now=NOW).answer == "Omar"


@pytest.mark.parametrize(("question", "texts", "options"), [
    ("Where did I fix the lamp?",
     ("I repair the lamp in the garage.", "I look at the lamp in the kitchen.", "I carry the lamp into the kitchen."),
     ["In the garage", "In the kitchen", "In the bedroom", "In the hall"]),
    ("What did I purchase at the market?",
     ("I buy mussels at the market.", "I look at crabs at the market.", "Crabs are piled at the market stall."),
     ["Mussels", "Crabs", "Oysters", "Shrimp"]),
    ("Who was on the sofa reading?",
     ("Anna sits on the couch with a book.", "Ben reads a book at the desk.", "Ben holds a book by the window."),
     ["Anna", "Ben", "Carl", "Dora"]),
    ("Where did Tom leave the trash?",
     ("Tom puts the rubbish bag by the door.", "Tom puts the cup by the sink.", "Tom puts the plate by the sink."),
     ["By the door", "By the sink", "On the table", "In the car"]),
    ("Where did I start the puzzle?",
     ("I begin the puzzle at the table.", "I finish the puzzle on the floor.", "I look at the puzzle on the floor."),
     ["At the table", "On the floor", "On the bed", "In the car"]),
])
def test_a_word_of_the_question_is_held_by_its_synonym_in_the_evidence(
        language: OfflineLanguage, question: str, texts: tuple[str, str, str], options: list[str]) -> None:
    """The question says "fix", "purchase", "sofa", "trash", "start" where the one item that
    answers says "repair", "buy", "couch", "rubbish", "begin"; the two others, ranked higher,
    share only the question's other words."""
    evidence = [item(100, texts[0], 0.4), item(600, texts[1], 0.9), item(900, texts[2], 0.8)]
    assert language.answer(question, options, evidence).answer == options[0]
