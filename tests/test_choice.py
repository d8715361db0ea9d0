"""One reader of multiple-choice replies for the agent, the prompted tasks and the scorer."""

import pytest

from videomem.agent.react import _resolve
from videomem.choice import read_choice, search_text, strip_label
from videomem.models.tasks.agent import AnswerOut

DOORS = ["A red door is opened", "The blue door", "The lamp", "Nothing happens"]


@pytest.mark.parametrize(
    ("reply", "letter"),
    [
        ("<answer>C</answer>", "C"),
        ("Both A) and B) fit, but <answer> (B) </answer>", "B"),
        ("<answer>the lamp</answer>", "C"),  # an option's text inside the tags
        ("(A)", "A"),
        ("A.", "A"),
        ("B", "B"),
        ("A. The red door", "A"),
        ("Answer: A", "A"),
        ("The answer is D.", "D"),
        ("Option A: the lamp", "A"),
        ("the correct answer is (c)", "C"),  # lower case in an explicit form
        ("(c)", "C"),
        ("answer: b", "B"),
        ("i think b", None),  # a lower-case letter in running text is no choice
        ("A red door is opened.", None),  # the article, not option A: no option reads so
        ("B or C", None),  # two letters: no guess
        ("Both A and C", None),  # "A and": the letter, not the article; two letters
        ("A or D", None),
        ("A and C are wrong, so B", None),
        ("<answer>E</answer>", None),  # not among four options
        ("The red door", None),
        ("", None),
        (None, None),
    ],
)
def test_read_choice(reply, letter):
    assert read_choice(reply, ["one", "two", "the lamp", "four"]) == letter


def test_options_echoed_as_text_without_a_letter():
    assert read_choice("A red door is opened.", DOORS) == "A"  # the article starts option A itself
    assert read_choice("the BLUE door", DOORS) == "B"
    assert read_choice("I am fairly sure it was the lamp, on the left.", DOORS) == "C"
    assert read_choice("The blue door or the lamp", DOORS) is None  # two options: no guess
    # An option inside a longer option the reply holds counts once, as the longer one.
    assert read_choice("Alice and Bob did", ["Alice", "Alice and Bob", "Carol", "Dan"]) == "B"
    # A short option is not looked for inside prose ("2" in "2 of them" proves nothing).
    assert read_choice("I saw 2 of them", ["1", "2", "3", "4"]) is None


def test_number_of_options_bounds_the_letters():
    assert read_choice("E", ["a", "b", "c", "d", "e"]) == "E"
    assert read_choice("D", ["a", "b", "c"]) is None


def test_labels_and_search_text():
    assert strip_label("(A) red box") == "red box" and strip_label("b. blue") == "blue"
    assert read_choice("red box", ["(A) red box", "(B) blue box"]) == "A"
    assert search_text("Who?", ["Alice", "Bob"]) == "Who? Alice Bob"
    assert search_text("Who?", None) == "Who?"


def test_agent_never_reads_an_article_as_option_a():
    # The answer step's reply names no option: the agent must not take "A red ..." for option A.
    assert _resolve(AnswerOut(answer="A red door is opened."), ["x", "y", "z", "w"]) == ("A red door is opened.", None)
    assert _resolve(AnswerOut(answer="the lamp"), DOORS) == ("C. The lamp", "C")
    assert _resolve(AnswerOut(answer="B. the blue door"), DOORS) == ("B. The blue door", "B")
