"""What a question asks for, read from its parse (`models/offline/intent.py`): phrasings of no
benchmark's templates, written for these tests."""

from __future__ import annotations

import pytest

from videomem.models.offline.intent import (
    Extreme, absent_words, adverb_places, asks_about_speech, asks_every_day, asks_negated, between_phrases, first_to_last, frequency_extreme, occurrence_words, counted_thing, counted_unit, counts_into, counts_people, duration_extreme, modifier_words,
    asks_summary, asks_whereabouts, marks_present, meal_time, moved_thing, placing_clause, question_actor, question_intent, recording_part, recording_stretch, recording_words,
    relative_day, time_position, what_was_said,
)


@pytest.mark.parametrize(
    ("question", "end"),
    [
        ("What was the earliest thing Nicous cooked?", "earliest"),
        ("Which mug did Alice grab at the very start?", "earliest"),
        ("Where had the lamp been standing originally?", "earliest"),
        ("At first, what was Choiszt holding?", "earliest"),
        ("What did Tasha pick up to begin with?", "earliest"),
        ("Initially, which table held the flowers?", "earliest"),
        ("In the end, which shelf did the book go on?", "latest"),
        ("Where is the umbrella now?", "latest"),
        ("What was the newest thing put in the fridge?", "latest"),
        ("Where did she leave the mug the final time?", "latest"),
        ("Which jacket was Shure wearing most recently?", "latest"),
        ("What has Lucia been reading lately?", "latest"),
        ("What did Anna do last?", "latest"),
        ("Which snack did Jake eventually choose?", "latest"),
        ("What is Omar cooking at the moment?", "latest"),
        ("Who holds the remote at present?", "latest"),
        ("How does the film end?", "latest"),
        ("How does the clip open?", "earliest"),
        ("What did Ines hand me a moment ago?", "latest"),
        ("A little while ago, who rang the doorbell?", "latest"),
        ("Which mug did I wash a few minutes ago?", "latest"),
        ("Who waved at me a minute ago?", "latest"),
    ],
)
def test_an_end_of_the_timeline_is_read_from_varied_phrasing(question: str, end: str) -> None:
    position = time_position(question)
    assert position is not None and position.end == end


@pytest.mark.parametrize(
    "question",
    [
        "How long did the meeting last?",  # 'last' the verb
        "Did the dog bark first or last?",  # both ends: an order
        "Where did the story start?",  # a start that is no end of the timeline
        "What colour is the kettle?",
        "Which came later, the rain or the barbecue?",  # a comparison, not an end
        "How long ago did the kettle boil?",  # a time asked for
        "How many minutes ago did Ines ring?",
        "What was I doing two hours ago?",  # a place in time, not the latest occasion
        "What did Alice cook on the first day?",  # which day, not which occurrence
        "Where did we eat on our last evening?",
        "What was Omar doing at the moment the bell rang?",  # a moment named, not now
        "What happens in the last part of the video?",  # a part of the recording (recording_part)
    ],
)
def test_no_end_of_the_timeline_without_one(question: str) -> None:
    assert time_position(question) is None


@pytest.mark.parametrize(
    ("question", "end"),
    [
        ("What did Omar use to have for breakfast?", "earliest"),
        ("What snack does Pia no longer buy?", "earliest"),
        ("Which route doesn't Kim take anymore?", "earliest"),
        ("What did Omar quit smoking?", None),  # "quit" with an object, not a gerund
        ("What did Pia stop drinking after dinner?", "earliest"),
        ("These days, how does Kim get to work?", "latest"),
        ("What has Omar been cooking over the past three days?", "latest"),
        ("Which podcast did Pia switch to?", "latest"),
        ("What did Kim change to eating at night?", "latest"),
        ("Which soap did Omar replace the old one with?", "latest"),
        # not a habit that changed
        ("What was the blender last used to make?", "latest"),
        ("When did Pia use her phone to pay?", None),
        ("What did Kim use to open the parcel?", None),  # a tool: the verb has its own object
        ("Which knife did Omar use to slice the melon?", None),
        ("Where did Kim switch the lamp on?", None),
    ],
)
def test_a_habit_that_changed_is_asked_at_one_end(question: str, end: str | None) -> None:
    """The old habit ("used to", "no longer", "stopped …ing") is the earliest occurrence, the
    new one ("these days", "switched to", "replaced … with") the latest."""
    position = time_position(question)
    assert (position.end if position else None) == end


@pytest.mark.parametrize(
    ("question", "counted"),
    [
        ("Where did Nadia park the van the second time?", ("earliest", 2, False)),
        ("What did Nadia buy on her third trip to the bakery?", ("earliest", 3, False)),
        ("Who drove the second-to-last time the van went out?", ("latest", 2, False)),
        ("Where was the van parked the third from last time?", ("latest", 3, False)),
        ("What did Nadia order on her penultimate visit?", ("latest", 2, False)),
        ("Which errand did Nadia run second?", ("earliest", 2, True)),
        ("What was the fourth thing Nadia did after breakfast?", ("earliest", 4, True)),
        ("What did Nadia do 2nd?", ("earliest", 2, True)),
        ("Who lives on the second floor?", None),
        ("What did Nadia cook on the third day?", None),
        ("How many seconds did the kettle take?", None),
        ("Where did Nadia park the van the first time?", ("earliest", 1, False)),
    ],
)
def test_an_ordinal_counts_occasions_or_happenings_from_one_end(
    question: str, counted: tuple[str, int, bool] | None
) -> None:
    """"The second time" counts the occasions of the question's happening, "which … second"
    the different happenings the options name; an ordinal of a floor or a day counts neither."""
    position = time_position(question)
    assert ((position.end, position.nth, position.sequence) if position else None) == counted


@pytest.mark.parametrize(
    ("question", "extreme"),
    [
        ("Which chore took the longest?", Extreme(longest=True, total=False)),
        ("What lasted longer, the meeting or the lunch?", Extreme(longest=True, total=False)),
        ("Which game lasted the shortest?", Extreme(longest=False, total=False)),
        ("What did Omar spend the most time on?", Extreme(longest=True, total=True)),
        ("Which task did Omar spend the least amount of time on?", Extreme(longest=False, total=True)),
        ("Where did Omar spend most of the evening?", Extreme(longest=True, total=True)),
        ("Which is the longest bench in the park?", None),
        ("Who ate the most biscuits?", None),
        ("What did Omar do most often?", None),
    ],
)
def test_which_happening_took_the_most_or_least_time(question: str, extreme: Extreme | None) -> None:
    """A superlative or comparative of length said of a verb, or the most / least time spent;
    not the length of a thing, the most of a thing, or how often."""
    assert duration_extreme(question) == extreme


@pytest.mark.parametrize(
    ("question", "unit"),
    [
        ("For how many minutes did the kettle boil?", "minute"),
        ("How many hours ago did Omar leave?", "hour"),
        ("How many seconds did the toast take?", "second"),
        ("How many biscuits did Omar eat?", None),
        ("How long did the kettle boil?", None),
    ],
)
def test_the_unit_of_time_a_question_counts(question: str, unit: str | None) -> None:
    assert counted_unit(question) == unit


@pytest.mark.parametrize(
    ("question", "places"),
    [("Who carried the chairs inside?", {"inside"}), ("When did the cat go outside?", {"outside"}),
     ("What was inside the drawer?", set()), ("Who stood outside the bakery?", set())],
)
def test_inside_or_outside_said_of_a_verb_is_where_something_went(question: str, places: set[str]) -> None:
    assert adverb_places(question) == frozenset(places)


@pytest.mark.parametrize(
    ("question", "away"),
    [("How long was the red van gone?", {"red", "van"}), ("For how long was Ama away from the office?", {"ama"}),
     ("How long was the cat out of the flat?", {"cat"}), ("How long did Ravi stay away?", {"ravi"}),
     ("How long were we out?", None), ("How long did it take to sort out the drawer?", None),
     ("How long did Ravi paint the fence?", None)],
)
def test_who_or_what_was_away(question: str, away: set[str] | None) -> None:
    assert absent_words(question) == (None if away is None else frozenset(away))


@pytest.mark.parametrize(
    ("question", "place"),
    [("How many minutes into the video does the kettle boil?", True), ("How many seconds in does the dog bark?", True),
     ("How many minutes did the kettle boil?", False), ("How many minutes in the garden did Omar spend?", False),
     ("How many minutes into the match was the penalty?", False)],
)
def test_a_unit_counted_into_the_recording_is_a_place_in_it(question: str, place: bool) -> None:
    assert counts_into(question) is place


@pytest.mark.parametrize(
    ("question", "people"),
    [
        ("How many guests stayed for the fireworks?", True),
        ("How many different people did Omar phone?", True),
        ("How many of us went swimming in the lake?", True),
        ("How many others were waiting at the bus stop?", True),
        ("What was the number of kids on the trampoline?", True),
        ("Count the people at the bonfire.", True),
        ("How many times did Omar phone his aunt?", False),
        ("How many buns did the guests eat?", False),
        ("What is the room number of our guest?", False),
    ],
)
def test_a_count_of_people(question: str, people: bool) -> None:
    assert counts_people(question) is people


@pytest.mark.parametrize(
    ("question", "thing"),
    [
        ("How many spare batteries did Omar bring along?", "battery"),
        ("Roughly how many sheets of plywood were stacked in the shed?", "sheet"),
        ("How many paper lanterns did we hang in the end?", "lantern"),
        ("How many times did Omar phone his aunt?", None),
        ("How many minutes did the bus wait?", None),
        ("How many guests stayed for the fireworks?", None),
        ("How many others were waiting at the bus stop?", None),
        ("How long did the bus wait?", None),
    ],
)
def test_the_thing_a_question_counts(question: str, thing: str | None) -> None:
    """Things, not occasions, units of time or people, which are counted in other ways."""
    assert counted_thing(question) == thing


@pytest.mark.parametrize(
    ("question", "every"),
    [
        ("Which of these did Omar do on every one of the four days?", True),
        ("What does Omar cook each evening?", True),
        ("Which of these did Omar do on all three days?", True),
        ("Which errand appears on each of the days recorded?", True),
        ("What did Omar check daily?", True),
        ("What did Omar do all day?", False),
        ("What did Omar do on the third day?", False),
        ("Which day did Omar bake bread?", False),
    ],
)
def test_a_question_about_every_day(question: str, every: bool) -> None:
    assert asks_every_day(question) is every


@pytest.mark.parametrize(
    ("question", "present"),
    [
        ("Now that I'm ironing the shirts, what did I iron the last time?", True),
        ("Ravi is tuning the violin now; who tuned it the last time?", True),
        ("This time I took the bus, so how did I get there the last time?", True),
        ("What is Ravi currently holding?", True),
        ("Who is at the gate at the moment?", True),
        ("What did I iron the last time?", False),
        ("Who knocked on the door just now?", False),
        ("Who tuned the violin the last time Ravi played?", False),
        ("How much time did the ironing take?", False),
    ],
)
def test_a_question_asked_while_something_goes_on(question: str, present: bool) -> None:
    assert marks_present(question) is present


def test_the_cue_words_are_returned_with_their_lemmas() -> None:
    position = time_position("What was the earliest snack Katrina opened?")
    assert position is not None and {"earliest", "early"} <= position.words and "snack" not in position.words


@pytest.mark.parametrize(
    "question",
    ["Which person suggested going to the park?", "What guest arrived with the cake?", "Whose bag is on the chair?"],
)
def test_a_person_asked_for_by_which_or_what_is_a_who_question(question: str) -> None:
    assert question_intent(question) == "who"


def test_which_thing_is_not_a_who_question() -> None:
    assert question_intent("Which cup is on the shelf?") is None


@pytest.mark.parametrize(
    ("question", "intent"),
    [
        ("What's the number of times Pia rang the bell?", "count"),
        ("What was the number of guests at the table?", "count"),
        ("Count the times Omar opened the fridge.", "count"),
        ("What is the phone number of the plumber?", None),
        ("Who counted the plates?", "who"),
    ],
)
def test_a_count_asked_for_without_how_many(question: str, intent: str | None) -> None:
    assert question_intent(question) == intent


@pytest.mark.parametrize(
    ("question", "speech"),
    [
        ("Who brought up the concert?", True),
        ("Which person pointed out the leak under the sink?", True),
        ("Who was talking about the tickets?", True),
        ("What was I told the code is?", True),
        ("Who brought the cake?", False),
        ("Who carried the box upstairs?", False),
    ],
)
def test_a_question_about_speech_is_read_from_its_verbs(question: str, speech: bool) -> None:
    assert asks_about_speech(question) is speech


@pytest.mark.parametrize(
    ("question", "spans"),
    [("How much time went by between Lena's first and last lap of the pool?", True),
     ("How long from the earliest delivery to the very last?", True),
     ("How many hours passed between the first time I charged the drone and the last?", True),
     ("How long were the first swim and the last swim?", False),
     ("How long between the first and the second delivery?", False),
     ("Which did I do first and which last?", False),
     ("How long after the first call did the last guest leave?", False)],
)
def test_a_question_spanning_one_happening_from_its_first_to_its_last_time(question: str, spans: bool) -> None:
    assert first_to_last(question) is spans


@pytest.mark.parametrize(
    ("question", "cues"),
    [("Which of these came first on the second day?", {"come"}),
     ("Which of the chores happened last?", {"happen"}),
     ("What took place right after the storm?", {"take", "place"}),
     ("Who came to fix the boiler?", set()),
     ("Which came with the parcel, the invoice or the manual?", {"come"}),
     ("What did Ravi bring?", set())],
)
def test_a_verb_that_only_says_something_happened_is_a_cue(question: str, cues: set[str]) -> None:
    assert occurrence_words(question) == cues


def test_the_two_happenings_of_a_between_question_are_every_split_at_and() -> None:
    assert between_phrases("How long was it between the bread and butter snack and the nap?") == [
        ("the bread", "butter snack and the nap"), ("the bread and butter snack", "the nap"),
    ]
    assert between_phrases("How long did the nap last?") == []


@pytest.mark.parametrize(
    ("question", "phrases"),
    [("How much time separated the phone call and the visit?", [("the phone call", "the visit")]),
     ("How many minutes after the bread went into the oven did Noor take it out?",
      [("the bread went into the oven", "Noor take it out")]),
     ("Roughly how long before the ferry left were the bikes loaded?", [("the ferry left", "the bikes loaded")]),
     ("How long after the kettle was filled did Ravi pour the tea?", [("the kettle was filled", "Ravi pour the tea")]),
     ("How long did Ravi nap after lunch?", []), ("What did Noor do after the ferry left?", [])],
)
def test_the_two_happenings_a_duration_is_measured_between(question: str, phrases: list[tuple[str, str]]) -> None:
    """"How long after X did Y?" measures from X to Y, as "between X and Y" does; a duration
    of one happening placed after another ("how long did Ravi nap after lunch?") is not."""
    assert between_phrases(question) == phrases


@pytest.mark.parametrize(
    ("question", "negated"),
    [("Which evening did Noor not cook?", True), ("On what day didn't the ferry run?", True),
     ("Which evening did Noor cook?", False), ("Which room has nobody cleaned?", False)],
)
def test_a_question_about_when_something_did_not_happen(question: str, negated: bool) -> None:
    assert asks_negated(question) is negated


@pytest.mark.parametrize(
    ("question", "most"),
    [("Which chore did Noor do the most times?", True), ("What happened more often, the ferry or the bus?", True),
     ("Which did Ravi do least often?", False), ("Which game did we play the fewest times?", False),
     ("Which sound keeps coming back in the recording?", True), ("How often did Ravi swim?", None),
     ("Which chore took the most time?", None)],
)
def test_a_question_that_asks_what_came_most_or_least_often(question: str, most: bool | None) -> None:
    assert frequency_extreme(question) is most


@pytest.mark.parametrize(
    ("question", "modifiers"),
    [
        ("When was the kettle on the counter last used?", {"counter", "use"}),
        ("When was the red bicycle in the garage last ridden?", {"red", "garage"}),
        ("When was the last time I repaired the lamp?", set()),  # the clause on "time" is the happening
        ("At what hour did Omar bring the chairs that stood in the hall?", {"stand", "hall"}),
        ("When did I put the cup on the shelf?", set()),  # a place the verb takes, not one of the cup
    ],
)
def test_the_words_that_only_pick_out_a_thing_are_its_modifiers(question: str, modifiers: set[str]) -> None:
    assert modifier_words(question) == modifiers


@pytest.mark.parametrize(
    ("question", "relation", "text"),
    [
        ("What was Ama doing when the bell rang?", "during", "the bell rang"),
        ("While we were eating, who came to the door?", "during", "we were eating"),
        ("What was Kofi holding as he left the shop?", "during", "he left the shop"),
        ("What did Ama do right before she locked the gate?", "before", "she locked the gate"),
        ("What did Kofi do just after feeding the goats?", "after", "feeding the goats"),
        ("What did we do after lunch?", "after", "lunch"),
        ("What happened once the rain stopped?", "after", "the rain stopped"),
        ("Where were the keys right after my coffee?", "after", "my coffee"),
        ("Right after my coffee on the morning of DAY3, where were the keys?", "after", "my coffee"),
        ("After the movie on day 2, who washed the dishes?", "after", "the movie"),
    ],
)
def test_a_clause_that_places_the_question_by_another_happening(question: str, relation: str, text: str) -> None:
    placing = placing_clause(question)
    assert placing is not None and (placing.relation, placing.text) == (relation, text)


@pytest.mark.parametrize(
    "question",
    ["Did the goats eat before or after the rain?", "When did Ama lock the gate?",
     "How long did we wait after lunch?", "Have I read this book before?", "What did I do before noon?",
     "Where did I sit after 10:00?"],
)
def test_no_clause_places_a_question_that_weighs_two_happenings_or_asks_a_time(question: str) -> None:
    assert placing_clause(question) is None


@pytest.mark.parametrize(
    ("question", "moved"),
    [("How many times did I move the keys on DAY2?", ("move", "key")),
     ("How often were the chairs shifted this morning?", ("shift", "chair")),
     ("How many times were the chairs moved on day 2?", ("move", "chair")),
     ("How many times did I move the keys to the shelf?", None),  # moves to one place: a happening
     ("How many keys did I move?", None), ("How many times did I move?", None), ("Who moved the lamp?", None)],
)
def test_a_count_of_how_often_a_thing_was_moved_names_the_thing(question: str, moved: tuple[str, str] | None) -> None:
    assert moved_thing(question) == moved


@pytest.mark.parametrize(
    ("question", "whereabouts"),
    [("Where were the keys right after my coffee?", True), ("Where is my phone now?", True),
     ("Right after lunch on day 2, where was the kettle?", True), ("Where did I put the keys?", False),
     ("Where was I sitting after lunch?", False), ("What was on the table?", False)],
)
def test_where_a_thing_is_is_asked_with_be_not_with_a_doing(question: str, whereabouts: bool) -> None:
    assert asks_whereabouts(question) is whereabouts


@pytest.mark.parametrize(
    ("question", "intent"),
    [("What was Ama doing when the bell rang?", None), ("When the bell rang, who was at the gate?", "who"),
     ("What time was it when the bell rang?", "when"), ("So when did the bell ring?", "when")],
)
def test_when_opening_a_clause_does_not_ask_for_a_time(question: str, intent: str | None) -> None:
    assert question_intent(question) == intent


@pytest.mark.parametrize(
    ("question", "middle"),
    [("What happens in the middle of the video?", True), ("What is on screen at the midpoint of the recording?", True),
     ("What is shown halfway through?", True), ("Who sat in the middle of the bench?", False),
     ("What woke me in the middle of the night?", False), ("Why did I stop halfway through cooking?", False)],
)
def test_the_middle_of_the_recording_is_asked_about_by_name(question: str, middle: bool) -> None:
    assert (recording_part(question) == (1 / 3, 2 / 3)) is middle


@pytest.mark.parametrize(
    ("question", "part"),
    [("What goes on in the last part of the video?", (2 / 3, 1.0)), ("Who appears in the second half?", (0.5, 1.0)),
     ("What is shown in the opening section of the film?", (0.0, 1 / 3)),
     ("What happens during the final quarter of the recording?", (0.75, 1.0)),
     ("What did I eat in the first half of the match?", None), ("Which part of the bike broke first?", None),
     ("When did Ama first bake bread?", None)],
)
def test_a_part_of_the_recording_named_from_one_end(question: str, part: tuple[float, float] | None) -> None:
    assert recording_part(question) == (part if part is None else pytest.approx(part))


@pytest.mark.parametrize(
    ("question", "named"),
    [("What happens in the last few minutes of the video?", {"video"}), ("What is shown at the end of the clip?", {"clip"}),
     ("What is the man holding throughout the film?", {"film"}), ("What did we watch in the video on the phone?", set()),
     ("When did the video on the tablet start playing?", set())],
)
def test_the_words_that_name_the_recording_itself(question: str, named: set[str]) -> None:
    assert recording_words(question) == named


@pytest.mark.parametrize(
    ("question", "day"),
    [("What did Ravi cook yesterday?", "yesterday"), ("Where did I park the bike last night?", "last night"),
     ("Who did I play chess with today?", "today"), ("Which shop did we visit yesterday afternoon?", "yesterday afternoon"),
     ("This morning, what did Noor water?", "this morning"),
     ("What did I fix the day before yesterday?", "the day before yesterday"),
     ("What are Noor's errands for today?", None), ("Who noticed that the bins were not emptied yesterday?", None),
     ("What does Ravi want us to rehearse tonight?", None), ("What have I read since yesterday?", None),
     ("Who skipped today's rehearsal?", None)],
)
def test_a_day_said_relative_to_now_of_the_main_verb(question: str, day: str | None) -> None:
    assert relative_day(question) == day


@pytest.mark.parametrize(
    ("question", "meal"),
    [("What did we have for dinner?", "dinner"), ("Who knocked over the jug during breakfast?", "breakfast"),
     ("At lunch, what did Ravi drink?", "lunch"), ("What do we plan to cook for dinner?", None),
     ("What did I tidy after lunch?", None), ("Where did I have breakfast?", "breakfast"),
     ("What did I buy for dinner?", None)],
)
def test_a_meal_at_whose_hours_the_question_is_placed(question: str, meal: str | None) -> None:
    assert meal_time(question) == meal


@pytest.mark.parametrize(
    ("question", "actor"),
    [("What did I order from the bakery?", "i"), ("Which tool did Noor borrow?", "noor"), ("What did we eat?", "we"),
     ("Who borrowed the drill?", None), ("What did the courier leave?", None), ("What do you see on the shelf?", None)],
)
def test_whose_doing_the_question_asks_about(question: str, actor: str | None) -> None:
    assert question_actor(question) == actor


@pytest.mark.parametrize(
    ("question", "summary"),
    [("What was the evening mostly about?", True), ("Overall, how did Noor spend the weekend?", True),
     ("Which best sums up the hike?", True), ("Which choice best summarises the footage?", True),
     ("What is the central theme of the talk?", True), ("Which best describes the last hour of the recording?", True),
     ("Who mostly washes the dishes?", False), ("Which best describes Ravi's jacket?", False),
     ("What is the main reason Noor left early?", False), ("What did Ravi put on the table?", False),
     ("What happens during the final third of the film?", True), ("What happened at 14:10?", False),
     ("What happened in the kitchen?", False),
     ("What happened between minute 4 and minute 9?", True), ("Which things happen between 02:10 and 03:30?", True),
     ("What happened between breakfast and the ferry?", False),
     ("What went on between the 3-minute mark and the 8-minute mark?", True),
     ("From 10:15 to 10:40, what took place?", True), ("What occurred from minute 2 to minute 6?", True),
     ("What went on after the ferry left?", False), ("Who took place cards from 10:15 to 10:40?", False)],
)
def test_a_question_that_asks_what_a_stretch_was_mostly_about(question: str, summary: bool) -> None:
    assert asks_summary(question) is summary


@pytest.mark.parametrize(
    ("question", "stretch"),
    [("What happens in the final three minutes of the video?", ("latest", 180.0)),
     ("Which best describes the first twenty minutes?", ("earliest", 1200.0)),
     ("What is on screen during the opening minute?", ("earliest", 60.0)),
     ("What did Noor do in the last hour?", ("latest", 3600.0)),
     ("What happened in the first ten minutes of the match?", None), ("When was the last time Ravi swam?", None)],
)
def test_a_stretch_of_time_named_from_one_end(question: str, stretch: tuple[str, float] | None) -> None:
    assert recording_stretch(question) == stretch


@pytest.mark.parametrize(
    ("question", "said", "not_said"),
    [
        ("While we were icing the cake, who said the oven was too hot?", {"oven", "hot"}, {"ice", "cake"}),
        ("Who told me about the flat tyre after lunch?", {"flat", "tyre"}, {"lunch"}),
        ("Who suggested calling a taxi when the rain started?", {"call", "taxi"}, {"rain", "start"}),
        ("Who asked me to fetch the ladder?", {"fetch", "ladder"}, {"i"}),
    ],
)
def test_what_was_said_is_what_the_verb_of_speech_governs(question: str, said: set[str], not_said: set[str]) -> None:
    words = what_was_said(question)
    assert said <= words and not (not_said & words)


def test_nothing_is_said_without_a_verb_of_speech() -> None:
    assert what_was_said("Who fixed the bike while we were icing the cake?") == frozenset()
