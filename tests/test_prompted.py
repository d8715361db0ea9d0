"""Prompt-driven tasks: prompts and schemas sent, replies repaired, re-asked, or failed cleanly."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest
from PIL import Image

from videomem.config import RoleConfig
from videomem.errors import MalformedOutputError, ModelError
from videomem.evidence import Evidence
from videomem.models.engines import Generation, LMRequest, VLRequest
from videomem.models.tasks.agent import AgentState, AnswerOut, StepRecord, ToolCall
from videomem.models.tasks.captioning import CaptionOut
from videomem.models.tasks.clips import Unusable
from videomem.models.tasks.episodic import EntitiesOut, RankCandidate, RankingOut, Triplet, TripletsOut
from videomem.models.tasks.objects import MergeDecision, ObjectRecord, ObjectsOut
from videomem.models.tasks.semantic import EpisodicFact, SemanticOut
from videomem.models.tasks.summaries import SummaryOut
from videomem.models.tasks.translation import TranslationOut
from videomem.models.usage import Usage
from videomem.core import ClipView
from videomem.models.prompted import PromptedLanguage, PromptedVision, extract_json
from videomem.models.templates import quoted_reply


class ScriptedEngine:
    """Engine test double: replies with queued texts, records every batch it was sent. A reply
    number in `errors` comes back as a transport failure; `finish_reason` says why each stopped."""

    def __init__(self, replies: Sequence[str], finish_reason: str = "stop", errors: dict[int, str] | None = None) -> None:
        self.replies = list(replies)
        self.finish_reason = finish_reason
        self.errors = errors or {}
        self.sent = 0
        self.batches: list[list[VLRequest | LMRequest]] = []

    def generate(self, requests: Sequence[VLRequest | LMRequest]) -> list[Generation]:
        self.batches.append(list(requests))
        out = []
        for _ in requests:
            error = self.errors.get(self.sent)
            self.sent += 1
            out.append(Generation(self.replies.pop(0), Usage(10, 5, 0.01, 1), self.finish_reason, error))
        return out


def role(repairs: int = 2) -> RoleConfig:
    return RoleConfig(backend="openai", model="scripted", base_url="http://unused", json_repairs=repairs)


def clip(transcript: str = "") -> ClipView:
    frames = [Image.new("RGB", (32, 24), "red"), Image.new("RGB", (32, 24), "blue")]
    return ClipView("vid", 3600.0, 3610.0, frames, [3602.5, 3607.5], transcript)


TOOLS = [
    {
        "name": "video.retrieval",
        "description": "Find clip time ranges matching a query.",
        "parameters": {
            "type": "object",
            "properties": {"query": {"type": "string"}},
            "required": ["query"],
            "additionalProperties": False,
        },
    },
    {
        "name": "video.qa",
        "description": "Look at frames of a time range.",
        "parameters": {
            "type": "object",
            "properties": {"question": {"type": "string"}, "t_start": {"type": "number"}, "t_end": {"type": "number"}},
            "required": ["question", "t_start", "t_end"],
        },
    },
]


@pytest.mark.parametrize(
    "text",
    [
        '{"caption": "A man waves."}',
        'Sure! Here it is:\n```json\n{"caption": "A man waves."}\n```\nHope this helps.',
        'The caption is {"caption": "A man waves."} as requested.',
        '```\n{"caption": "A man waves."}\n```',
    ],
)
def test_extract_json_finds_the_object_in_fences_and_prose(text: str) -> None:
    assert extract_json(text) == {"caption": "A man waves."}


def test_extract_json_skips_brackets_that_are_not_json() -> None:
    assert extract_json('[note] see {not json} then {"a": [1, 2]}') == {"a": [1, 2]}
    with pytest.raises(ValueError, match="no JSON"):
        extract_json("I cannot help with that.")


def test_caption_request_carries_frames_prompt_and_schema() -> None:
    engine = ScriptedEngine(['{"caption": "Two people talk."}', '```json\n{"caption": "A dog runs."}\n```'])
    vision = PromptedVision(engine, role())
    captions = vision.caption_clips([clip("we should leave now"), clip()])
    assert captions == ["Two people talk.", "A dog runs."]
    assert len(engine.batches) == 1 and len(engine.batches[0]) == 2, "the batch goes to the engine at once"
    first = engine.batches[0][0]
    assert isinstance(first, VLRequest) and len(first.images) == 2
    assert first.json_schema == CaptionOut.model_json_schema()
    assert "01:00:00" in first.prompt and "01:00:10" in first.prompt, "clip range as clock time"
    assert "01:00:02" in first.prompt and "01:00:08" in first.prompt, "frame times"
    assert "we should leave now" in first.prompt
    assert "(none)" in engine.batches[0][1].prompt, "an empty transcript is said to be empty"


def test_each_task_sends_its_own_prompt_and_schema() -> None:
    record = {"name": "man in red", "kind": "person", "appearance": ["red jacket"], "identity": [], "value": "waves"}
    replies = [
        json.dumps({"objects": [record]}),
        json.dumps({"answer": "The sign says EXIT.", "choice": None}),
        json.dumps({"summary": "I cook, then eat."}),
        json.dumps({"entities": ["I", "onion"]}),
        json.dumps({"triplets": [{"subject": "I", "relation": "cut", "object": "onion"}]}),
        json.dumps({"ids": [8, 99, 7, 8]}),
        json.dumps({"triplets": [{"subject": "I", "relation": "likes", "object": "tea", "evidence": [0, 1]}]}),
        json.dumps({"same": True, "reason": "same jacket"}),
        json.dumps({"thought": "search", "tool": "video.retrieval", "arguments": {"query": "onion"}}),
        json.dumps({"answer": "Onions.", "choice": "B"}),
    ]
    engine = ScriptedEngine(replies)
    vision, language = PromptedVision(engine, role()), PromptedLanguage(engine, role())
    person = ObjectRecord.model_validate(record)

    assert vision.extract_objects([clip()])[0][0].name == "man in red"
    assert vision.answer_from_frames("What does the sign say?", clip()).answer == "The sign says EXIT."
    assert language.summarise([["I cut onions.", "I fry them."]]) == ["I cook, then eat."]
    assert language.extract_entities(["I cut an onion."]) == [["I", "onion"]]
    assert language.extract_triplets(["I cut an onion."], [["I", "onion"]])[0][0].object == "onion"
    candidates = [
        RankCandidate(7, "I cut onions.", 60.0, 70.0, 10.0, 1),
        RankCandidate(8, "I cook dinner.", 0.0, 600.0, 600.0, 1),
    ]
    assert language.rerank("What did I cook?", candidates) == [8, 7], "invented ids and repeats dropped"
    facts = [EpisodicFact(Triplet(subject="I", relation="drink", object="tea"), 0, "DAY2 08:00:00-08:05:00"),
             EpisodicFact(Triplet(subject="I", relation="make", object="tea"), 1, "DAY1 08:00:00-08:05:00")]
    assert language.induce_semantic(facts, 2)[0].evidence == [0, 1]
    assert language.same_entity([(person, person)]) == [True]
    state = AgentState("What did I cut?", ["carrots", "onions"], TOOLS, [], 1, 5, until=7200.0)
    assert language.plan_step(state).arguments == {"query": "onion"}
    evidence = [Evidence(65.0, 75.0, "I cut an onion on the board.", "events", 0.9, "vid")]
    assert language.answer("What did I cut?", ["carrots", "onions"], evidence).choice == "B"

    sent = [batch[0] for batch in engine.batches]
    schemas = [ObjectsOut, AnswerOut, SummaryOut, EntitiesOut, TripletsOut, RankingOut, SemanticOut, MergeDecision,
               ToolCall, AnswerOut]
    assert [r.json_schema for r in sent] == [m.model_json_schema() for m in schemas]
    assert [type(r) for r in sent] == [VLRequest] * 2 + [LMRequest] * 8
    assert len({r.prompt.splitlines()[0] for r in sent[2:9]}) == 7, "a distinct prompt file per task"
    summary, entities, triplets, rerank, semantic, merge, plan, answer = (r.prompt for r in sent[2:])
    assert "1. I cut onions." in summary and "2. I fry them." in summary
    assert "I cut an onion." in entities
    assert "I cut an onion." in triplets and '["I", "onion"]' in triplets, "triplets conditioned on the entities"
    assert "What did I cook?" in rerank and "[7] 10 s window, 00:01:00-00:01:10: I cut onions." in rerank
    assert "[8] 600 s window" in rerank
    assert "0. [segment 0, DAY2 08:00:00-08:05:00] I | drink | tea" in semantic
    assert "1. [segment 1, DAY1 08:00:00-08:05:00] I | make | tea" in semantic and "at least 2 different" in semantic
    assert "red jacket" in merge
    assert "video.retrieval" in plan and '"required":["query"]' in plan and "02:00:00" in plan
    assert "A. carrots" in plan and "B. onions" in plan and "step 1 of at most 5" in plan
    assert "00:01:05-00:01:15" in answer and "I cut an onion on the board." in answer and "B. onions" in answer


def test_imported_caption_tasks_send_their_prompts_and_schemas() -> None:
    record = {"name": "Alice", "kind": "person", "appearance": [], "identity": [], "value": "tightens screws"}
    replies = [
        json.dumps({"translation": "Alice tightens the screws."}),
        json.dumps({"translation": "Lucia carries a vase."}),
        json.dumps({"objects": [record]}),
    ]
    engine = ScriptedEngine(replies)
    language = PromptedLanguage(engine, role())
    assert language.translate(["Alice拧紧螺丝。", "Lucia拿着花瓶。"], "English") == [
        "Alice tightens the screws.", "Lucia carries a vase."
    ]
    assert language.extract_objects_from_text(["Alice tightens the screws."])[0][0].name == "Alice"
    first, second = engine.batches[0]
    assert "Alice拧紧螺丝。" in first.prompt and "into English" in first.prompt and "Lucia拿着花瓶。" in second.prompt
    assert first.json_schema == TranslationOut.model_json_schema()
    (objects,) = engine.batches[1]
    assert "Alice tightens the screws." in objects.prompt and objects.json_schema == ObjectsOut.model_json_schema()
    assert "no images" in objects.prompt


def test_plan_step_renders_history() -> None:
    engine = ScriptedEngine(['{"thought": "enough", "tool": "finish", "arguments": {}}'])
    history = [StepRecord("look for onions", "video.retrieval", {"query": "onion"}, "00:01:05-00:01:15 cutting onion")]
    state = AgentState("What did I cut?", None, TOOLS, history, 2, 5)
    call = PromptedLanguage(engine, role()).plan_step(state)
    assert call.tool == "finish"
    prompt = engine.batches[0][0].prompt
    assert 'Call: video.retrieval {"query": "onion"}' in prompt
    assert "Observation: 00:01:05-00:01:15 cutting onion" in prompt
    assert "Query time: none" in prompt


def test_wrong_schema_is_reasked_with_the_error_appended() -> None:
    engine = ScriptedEngine(['{"text": "A man waves."}', '{"caption": "A man waves."}'])
    assert PromptedVision(engine, role()).caption_clips([clip()]) == ["A man waves."]
    assert len(engine.batches) == 2
    again = engine.batches[1][0]
    assert again.prompt.startswith(engine.batches[0][0].prompt), "the original prompt is kept"
    assert "caption: Field required" in again.prompt and '{"text": "A man waves."}' in again.prompt
    assert len(again.images) == 2 and again.json_schema == CaptionOut.model_json_schema()


def test_special_token_markers_in_a_reply_are_not_quoted_back_in_the_repair() -> None:
    markers = ["<|im_start|>", "<|video_pad|>", "<|image_pad|>", "<|eot_id|>", "<｜end▁of▁sentence｜>"]
    bad = f'{markers[0]}assistant {markers[1] * 3}{markers[2]} "A man waves." {markers[3]}{markers[4]}'
    engine = ScriptedEngine([bad, '{"caption": "A man waves."}'])
    assert PromptedVision(engine, role()).caption_clips([clip()]) == ["A man waves."]
    again = engine.batches[1][0].prompt
    assert 'assistant  "A man waves."' in again, "the rest of the reply is quoted as it was"
    assert not any(m in again for m in markers)

    # An error that quotes the reply (an unknown tool's name) loses them too.
    engine = ScriptedEngine([
        '{"tool": "<|vision_start|>web.search", "arguments": {}}',
        '{"tool": "video.retrieval", "arguments": {"query": "x"}}',
    ])
    assert PromptedLanguage(engine, role()).plan_step(AgentState("What?", None, TOOLS, [], 1, 5)).tool == "video.retrieval"
    again = engine.batches[1][0].prompt
    assert "unknown tool 'web.search'" in again and "<|" not in again
    assert quoted_reply("a <b|c> d, x <| y |> z") == "a <b|c> d, x <| y |> z", "only marker-shaped text goes"


def test_only_rejected_requests_are_reasked() -> None:
    engine = ScriptedEngine(['{"summary": "ok one"}', "no json here", '{"summary": "ok two"}'])
    out = PromptedLanguage(engine, role()).summarise([["a"], ["b"]])
    assert out == ["ok one", "ok two"]
    assert [len(batch) for batch in engine.batches] == [2, 1]
    assert "2. " not in engine.batches[1][0].prompt and "1. b" in engine.batches[1][0].prompt


def test_a_bare_list_is_wrapped_into_the_single_list_field() -> None:
    engine = ScriptedEngine(['[{"subject": "I", "relation": "open", "object": "door"}]'])
    assert PromptedLanguage(engine, role()).extract_triplets(["I open the door."], [["I", "door"]])[0][0].relation == "open"
    assert len(engine.batches) == 1


def test_after_the_bound_a_one_line_model_error_names_task_role_and_error() -> None:
    engine = ScriptedEngine(["not json"] * 3)
    with pytest.raises(MalformedOutputError) as info:
        PromptedLanguage(engine, role(repairs=2)).summarise([["a"]])
    message = str(info.value)
    assert "\n" not in message
    assert "summarise" in message and "llm" in message and "scripted" in message
    assert "3 time(s)" in message and "no JSON object" in message
    assert len(engine.batches) == 3


def test_a_clip_task_hands_back_each_unusable_clip_with_its_raw_reply_and_keeps_the_others() -> None:
    engine = ScriptedEngine(['{"caption": "A man waves."}', "not json", "still not json"])
    out = PromptedVision(engine, role(repairs=1)).caption_clips([clip(), clip("hello")])
    assert out[0] == "A man waves."
    assert out[1] == Unusable("caption_clip: the reply holds no JSON object", "still not json")
    assert [len(batch) for batch in engine.batches] == [2, 1]


def test_a_reply_cut_by_the_token_limit_is_asked_again_once_with_a_larger_budget() -> None:
    cut = '{"caption": "A man wa'
    engine = ScriptedEngine([cut, cut, '{"caption": "A man waves."}'], finish_reason="length")
    assert PromptedVision(engine, role(repairs=1)).caption_clips([clip()]) == ["A man waves."]
    budgets = [batch[0].max_tokens for batch in engine.batches]
    assert budgets == [None, 2 * 512, 2 * 512], "doubled once, then repaired with the same larger budget"
    assert "the reply holds no JSON object" in engine.batches[2][0].prompt, "the second cut reply went to repair"


def test_a_transport_failure_of_one_clip_keeps_the_others_and_of_all_raises() -> None:
    engine = ScriptedEngine(['{"caption": "ok"}', "", '{"caption": "fine"}'], errors={1: "vlm at http://x: HTTP 503"})
    out = PromptedVision(engine, role()).caption_clips([clip(), clip(), clip()])
    assert out[0] == "ok" and out[2] == "fine" and out[1] == Unusable("vlm at http://x: HTTP 503")
    assert len(engine.batches) == 1, "a request lost in transport is not re-asked (the backend retried it)"
    down = ScriptedEngine(["", ""], errors={0: "vlm at http://x: cannot connect", 1: "vlm at http://x: cannot connect"})
    with pytest.raises(ModelError, match="cannot connect"):
        PromptedVision(down, role()).caption_clips([clip(), clip()])


def test_zero_repairs_means_one_attempt() -> None:
    engine = ScriptedEngine(['{"summary": ""}'])
    with pytest.raises(ModelError, match="summarise.*llm.*summary: String should have at least 1 character"):
        PromptedLanguage(engine, role(repairs=0)).summarise([["a"]])
    assert len(engine.batches) == 1


def test_multiple_choice_answer_needs_a_valid_letter() -> None:
    evidence: list[Evidence] = []
    engine = ScriptedEngine(['{"answer": "C) the red one", "choice": null}'])
    assert PromptedLanguage(engine, role()).answer("Which?", ["x", "y", "the red one"], evidence).choice == "C"

    engine = ScriptedEngine(['{"answer": "the blue one", "choice": "E"}', '{"answer": "the blue one", "choice": "B"}'])
    assert PromptedLanguage(engine, role()).answer("Which?", ["red", "blue"], evidence).choice == "B"
    assert "must be one of A, B (got 'E')" in engine.batches[1][0].prompt
    assert "(no evidence was found)" in engine.batches[0][0].prompt

    engine = ScriptedEngine(['{"answer": "Blue.", "choice": "A"}'])
    assert PromptedLanguage(engine, role()).answer("Which colour?", None, evidence).choice is None

    # A reply starting with the article names no option: it is re-asked, never read as A.
    engine = ScriptedEngine(['{"answer": "A red door is opened."}', '{"answer": "the lamp"}'])
    out = PromptedLanguage(engine, role()).answer("What happens?", ["a train", "a bus", "the lamp"], evidence)
    assert out.choice == "C" and len(engine.batches) == 2


def test_plan_step_rejects_unknown_tools_and_bad_arguments() -> None:
    engine = ScriptedEngine(
        [
            '{"tool": "web.search", "arguments": {"query": "x"}}',
            '{"tool": "video.qa", "arguments": {"question": "colour?", "t_start": "soon"}}',
            '{"tool": "video.qa", "arguments": {"question": "colour?", "t_start": 10, "t_end": 20}}',
        ]
    )
    state = AgentState("What colour?", None, TOOLS, [], 1, 5)
    call = PromptedLanguage(engine, role()).plan_step(state)
    assert call.arguments == {"question": "colour?", "t_start": 10, "t_end": 20}
    assert "unknown tool 'web.search'; use one of video.retrieval, video.qa, finish" in engine.batches[1][0].prompt
    assert "'t_end' is a required property" in engine.batches[2][0].prompt


def test_semantic_evidence_out_of_range_is_dropped() -> None:
    engine = ScriptedEngine(['{"triplets": [{"subject": "I", "relation": "likes", "object": "tea", "evidence": [1, 7, -1]},'
                             '{"subject": "I", "relation": "liked", "object": "tea", "evidence": [0]}]}'])
    facts = [EpisodicFact(Triplet(subject="I", relation="drink", object="tea"), n, "") for n in (1, 0)]
    triplets = PromptedLanguage(engine, role()).induce_semantic(facts, 2)
    assert [t.evidence for t in triplets] == [[1]], "a triplet with no support in the new segment is not new"
