"""The paraphrased question set (`paraphrased/<questions file>`): every question reworded with
another template and a synonym, its options in another order, so no reader fits one wording."""

from __future__ import annotations

import dataclasses
import random
import re

from videomem.core import LETTERS
from videomem.synth.formats import QSpec
from videomem.synth.vocabulary import THING_SYNONYMS, VERB_SYNONYMS, VERBS

_REWORDINGS: tuple[tuple[str, tuple[str, ...]], ...] = (
    # (pattern of a question template, rewordings); {v} / {v3} a verb's synonym, {t} a thing's
    (r"What does (?P<p>\w+) (?P<v>\w+)\?", ("Which thing does {p} {v}?", "What object gets {v3_by} {p}?")),
    (r"Who (?P<v3>\w+) the (?P<t>[\w ]+)\?", ("Which person {v3} the {t}?", "Who is the one that {v3} the {t}?")),
    (r"Where does (?P<p>\w+) (?P<v>\w+) the (?P<t>[\w ]+)\?", ("In which room does {p} {v} the {t}?",)),
    (r"When does (?P<p>\w+) (?P<v>\w+) the (?P<t>[\w ]+)\?", ("At what time does {p} {v} the {t}?",)),
    (r"What is the (?P<x>[\w ]+)\?", ("Which number is the {x}?", "What was the {x} shown as?")),
    (r"How many times does (?P<p>\w+) water the plants\?", ("How often does {p} give the plants water?",)),
    (r"Where (?P<be>is|are) the (?P<x>\w+) put first\?", ("Where {be} the {x} placed initially?",)),
    (r"Where (?P<be>is|are) the (?P<x>\w+) put last\?", ("Where {be} the {x} placed most recently?",)),
    (r"What happens at (?P<x>[\d:]+)\?", ("What is going on at {x}?", "What can be seen at {x}?")),
    (r"Where did I last put the keys\?", ("Where did I most recently leave my keys?",)),
    (r"What did I last eat for lunch\?", ("What was my most recent lunch?",)),
    (r"What is on my latest shopping list\?", ("Which items are on my most recent grocery list?",)),
    (r"Who did I (?P<x>[\w ]+) with\?", ("With whom did I {x}?", "Who joined me to {x}?")),
    (r"What do I usually do first thing in the morning\?", ("What is my habit early in the morning?",)),
    (r"What do I usually do in the evening\?", ("What do I do most evenings?",)),
    (r"Where did someone last say my (?P<x>[\w ]+) is\?", ("Where was I most recently told my {x} is?",)),
    (r"What did someone say the (?P<x>[\w ]+) is called\?", ("Which name was mentioned for the {x}?",)),
    (r"What did someone say the (?P<x>[\w ]+) is\?", ("Which {x} was I told?", "What {x} was mentioned?")),
)


def paraphrase(specs: list[QSpec], seed: int) -> list[QSpec]:
    """Copies of the questions, each reworded (another template; a synonym for its verb or its
    thing, never both, so it still names the moment) with its options in another order. Its own
    random stream: nothing else in the corpus depends on it."""
    rng = random.Random(f"paraphrase-{seed}")
    out = []
    for original in specs:
        spec = dataclasses.replace(original, options=list(original.options))
        for pattern, rewordings in _REWORDINGS:
            match = re.fullmatch(pattern, spec.question)
            if match:
                spec.question = _reword(rng, rng.choice(rewordings), match.groupdict())
                break
        else:
            raise AssertionError(f"script bug: no rewording for {spec.question!r}")
        order = list(spec.options)
        while len(order) > 1 and order == spec.options:
            rng.shuffle(order)
        spec.options = order
        spec.letter = LETTERS[order.index(spec.correct)]
        out.append(spec)
    return out


def _reword(rng: random.Random, template: str, parts: dict[str, str]) -> str:
    third_to_base = {third.lower(): base for third, base in VERBS}
    base = parts.get("v") or third_to_base.get(parts.get("v3", ""), "")
    thing = parts.get("t", "")
    swap_verb = base in VERB_SYNONYMS and (not thing or rng.random() < 0.5)
    if swap_verb:
        new_base, new_third = VERB_SYNONYMS[base]
    else:
        new_base, new_third = base, next((t.lower() for t, b in VERBS if b == base), "")
        words = thing.split()
        if words and words[-1] in THING_SYNONYMS:
            thing = " ".join([*words[:-1], THING_SYNONYMS[words[-1]]])
    values = {**parts, "v": new_base, "v3": new_third, "t": thing}
    if "{v3_by}" in template:
        values["v3_by"] = f"{_participle(new_base)} by"
    return template.format(**values)


def _participle(base: str) -> str:
    """'pull open' → 'pulled open', 'carry' → 'carried', 'fix' → 'fixed'."""
    verb, *rest = base.split()
    if verb.endswith("y"):
        verb = verb[:-1] + "ied"
    else:
        verb = verb + ("d" if verb.endswith("e") else "ed")
    return " ".join([verb, *rest])

