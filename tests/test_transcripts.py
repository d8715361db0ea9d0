"""Transcripts: .srt, .vtt, JSON (documented shape, Whisper, EgoLife keys), clip alignment, bad files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from videomem.errors import TranscriptError
from videomem.timeline import DAY
from videomem.video.clips import plan_clips
from videomem.video.transcripts import Segment, align, load_transcript

SRT = """1
00:00:01,000 --> 00:00:04,500
Hello there,
how are you?

2
00:00:12,250 --> 00:00:13,000
<i>Fine</i>, thanks.
"""

VTT = """WEBVTT

NOTE a comment block

intro
00:01.000 --> 00:04.500 align:start
<v Jake>Hello <b>there</b></v>

01:00:02.000 --> 01:00:03.000
Bye
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_srt(tmp_path: Path) -> None:
    segments = load_transcript(write(tmp_path, "a.srt", SRT))
    assert segments == [
        Segment(1.0, 4.5, "Hello there, how are you?"),
        Segment(12.25, 13.0, "Fine, thanks."),
    ]


def test_vtt_drops_tags_and_comments(tmp_path: Path) -> None:
    segments = load_transcript(write(tmp_path, "a.vtt", VTT))
    assert [(s.t_start, s.t_end, s.text) for s in segments] == [(1.0, 4.5, "Hello there"), (3602.0, 3603.0, "Bye")]


def test_json_documented_shape(tmp_path: Path) -> None:
    data = [
        {"start": 15.0, "end": 16.0, "text": "second", "speaker": "Lucia"},
        {"start": 2, "end": 3.5, "text": "  first  line ", "speaker": "Jake"},
    ]
    segments = load_transcript(write(tmp_path, "a.json", json.dumps(data)))
    assert segments == [Segment(2.0, 3.5, "first line", "Jake"), Segment(15.0, 16.0, "second", "Lucia")]


def test_json_whisper_segments_and_clock_strings(tmp_path: Path) -> None:
    data = {"text": "all", "segments": [{"start": "00:01:05.5", "end": "01:07", "text": "later"}]}
    assert load_transcript(write(tmp_path, "w.json", json.dumps(data))) == [Segment(65.5, 67.0, "later")]


def test_json_egolife_keys_with_clock_times(tmp_path: Path) -> None:
    # A video that starts on DAY2 at 11:09:42 (corpus time), speech at 11:10:00.00-11:10:03.10.
    video_start = DAY + 11 * 3600 + 9 * 60 + 42
    data = [
        {"start_time": "11100000", "end_time": "11100302", "text": "code form", "speaker": "Jake"},
        {"start_time": "DAY2 11:10:10", "end_time": "DAY2 11:10:12", "text": "day form"},
    ]
    segments = load_transcript(write(tmp_path, "e.json", json.dumps(data)), video_start=video_start)
    assert [(round(s.t_start, 3), round(s.t_end, 3), s.speaker) for s in segments] == [(18.0, 21.1, "Jake"), (28.0, 30.0, None)]


def test_align_gives_a_long_segment_to_every_clip_it_overlaps() -> None:
    clips = plan_clips(35.0, 10.0)  # [0,10) [10,20) [20,30) [30,35]
    segments = [
        Segment(8.0, 21.0, "spans three"),
        Segment(10.0, 10.0, "instant at a boundary"),
        Segment(30.0, 31.0, "in the last"),
        Segment(40.0, 41.0, "after the video"),
        Segment(19.0, 20.0, "touches 20"),
    ]
    by_clip = align(sorted(segments, key=lambda s: s.t_start), clips)
    assert {i: [s.text for s in segs] for i, segs in by_clip.items()} == {
        0: ["spans three"],
        1: ["spans three", "instant at a boundary", "touches 20"],
        2: ["spans three"],
        3: ["in the last"],
    }


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("bad.srt", "this is not a subtitle\nat all\n", "no subtitle cues found"),
        ("bad.vtt", "WEBVTT\n\nhello\nworld\n", "no subtitle cues found"),
        ("bad.json", '[{"start": 1, "end": 2, "text": "ok"},', "not valid JSON"),
        ("shape.json", '{"words": []}', "expected a list of segments"),
        ("missing.json", '[{"start": 1, "end": 2}]', "segment 0: text: Field required"),
        ("order.json", '[{"start": 5, "end": 2, "text": "x"}]', "segment 0: ends (2s) before it starts (5s)"),
        ("time.json", '[{"start": "soon", "end": 2, "text": "x"}]', "segment 0: 'soon' is not a time"),
        ("a.txt", "hello", "unknown transcript format '.txt'"),
    ],
)
def test_bad_transcripts_are_one_line_errors(tmp_path: Path, name: str, content: str, message: str) -> None:
    path = write(tmp_path, name, content)
    with pytest.raises(TranscriptError) as err:
        load_transcript(path)
    text = str(err.value)
    assert message in text and str(path) in text and "\n" not in text


def test_binary_subtitle_file_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "bin.srt"
    path.write_bytes(b"\xff\xfe\x00\x01garbage\x00")
    with pytest.raises(TranscriptError, match="not a readable subtitle file"):
        load_transcript(path)


def test_empty_subtitle_file_means_no_speech(tmp_path: Path) -> None:
    assert load_transcript(write(tmp_path, "empty.srt", "")) == []
