"""Corpus time: text forms at the edges, float seconds inside."""

import pytest

from videomem.errors import TimeFormatError
from videomem.timeline import (
    DAY,
    clock_of,
    egolife_code_to_seconds,
    egolife_start,
    format_clock,
    format_day,
    format_egolife,
    parse_range,
    parse_time,
    ranges_in,
)


@pytest.mark.parametrize(
    "text,seconds",
    [
        ("95", 95.0),
        ("95.5", 95.5),
        ("01:35", 95.0),
        ("75:00", 4500.0),
        ("1:02:03", 3723.0),
        ("DAY1 11:09:42", 11 * 3600 + 9 * 60 + 42),
        ("DAY 2 00:00:10", DAY + 10),
        ("DAY3 00:00:10", 2 * DAY + 10),
        ("day2_11094208", DAY + 40182.4),
        ("11094208", 40182.4),
    ],
)
def test_parse_time(text: str, seconds: float) -> None:
    assert parse_time(text) == pytest.approx(seconds)


@pytest.mark.parametrize("bad", ["", "noon", "1:2:3:4", "DAY0 10:00:00", "12:61:00", "11096020", "-5", "25999999"])
def test_parse_time_rejects(bad: str) -> None:
    with pytest.raises(TimeFormatError):
        parse_time(bad)


def test_formats_round_trip() -> None:
    t = 2 * DAY + 11 * 3600 + 9 * 60 + 42.4
    assert format_day(t) == "DAY3 11:09:42"
    assert format_egolife(t) == ("DAY3", "11094208")
    assert parse_time(" ".join(format_egolife(t))) == pytest.approx(t)
    assert format_clock(3723.4) == "01:02:03"
    assert format_clock(100 * 3600) == "100:00:00"


def test_egolife_file_names() -> None:
    assert egolife_start("DAY1/DAY1_A1_JAKE_11094208.mp4") == pytest.approx(40182.4)
    assert egolife_start("DAY2_A1_JAKE_00000000.mp4") == pytest.approx(DAY)
    with pytest.raises(TimeFormatError, match="not an EgoLife file name"):
        egolife_start("holiday.mp4")
    assert egolife_code_to_seconds("00000019") == pytest.approx(19 / 20)


def test_the_files_and_hours_of_one_egolife_week_share_a_clock() -> None:
    """Two items compare in time only on one clock: a participant's files and the hours of a
    caption-only ingest are on the week's, any other video on its own."""
    assert clock_of("DAY1_B3_NOOR_09153010") == clock_of("DAY4_B3_NOOR_17000000") == "B3_NOOR"
    assert clock_of("B3_NOOR_DAY2_11000000") == "B3_NOOR"
    assert clock_of("DAY2_C1_RAVI_08000000") != clock_of("DAY2_B3_NOOR_08000000")
    assert clock_of("harbour_walk") == "harbour_walk"
    assert clock_of("birthday_20240101") == "birthday_20240101"


def test_frame_digits_past_the_last_frame_stay_in_their_second_in_order() -> None:
    """EgoLifeQA writes FF up to 55 (12002750, 21044820…21044827): read after frame 19, in order,
    before the next second, and written back inside that second."""
    seconds = [egolife_code_to_seconds(f"120027{ff:02d}", 3) for ff in range(100)]
    assert all(a < b for a, b in zip(seconds, seconds[1:]))
    assert seconds[19] == pytest.approx(2 * DAY + 12 * 3600 + 27 + 19 / 20)
    assert seconds[99] < egolife_code_to_seconds("12002800", 3)
    assert format_egolife(seconds[99]) == ("DAY3", "12002719")
    assert parse_time("DAY3_12002750") == seconds[50]


@pytest.mark.parametrize(
    "text,span",
    [
        ("DAY1 11:00:00 - DAY1 11:02:00", (39600.0, 39720.0)),
        ("DAY2 11:00:00 - 11:02:00", (DAY + 39600, DAY + 39720)),
        ("DAY 1 11:00:00 - DAY 1 11:02:00", (39600.0, 39720.0)),
        ("00:10:00 - 00:12:00", (600.0, 720.0)),
        ("600-720", (600.0, 720.0)),
        ("10:00 to 12:00", (600.0, 720.0)),
        ("DAY1_11000000 – 11020000", (39600.0, 39720.0)),
        ("red car", None),
        ("walk to the door", None),
        ("a red-haired man", None),
        ("12:00", None),
    ],
)
def test_parse_range(text: str, span: tuple[float, float] | None) -> None:
    assert parse_range(text) == span


def test_parse_range_rejects_a_backwards_range() -> None:
    with pytest.raises(TimeFormatError, match="ends before it starts"):
        parse_range("00:12:00 - 00:10:00")


def test_ranges_inside_a_text_are_read_as_parse_range_reads_them() -> None:
    text = "seen DAY2 11:00:00 - 11:02:00, then 600s - 720s, then 00:12:00 - 00:10:00"
    assert list(ranges_in(text)) == [(DAY + 39600.0, DAY + 39720.0), (600.0, 720.0), (720.0, 600.0)]
    assert parse_range("DAY2 11:00:00 - 11:02:00") == next(ranges_in(text))


def test_the_offline_models_read_ranges_typed_or_with_the_timeline() -> None:
    from videomem.evidence import Evidence
    from videomem.models.offline.planner import first_range
    from videomem.models.offline.options import option_range

    point, backwards, found = (Evidence(t0, t1, "x", "events", 1.0, "v") for t0, t1 in ((5, 5), (720, 600), (DAY + 39600, DAY + 39720)))
    assert first_range([point, backwards, found]) == (DAY + 39600.0, DAY + 39720.0)
    assert option_range("DAY2 11:00 - 11:30") == parse_range("DAY2 11:00 - 11:30")
    assert option_range("90 to 120") == (90.0, 120.0), "any form parse_range reads, clock or seconds"
    assert option_range("12:00 - 11:00") is None and option_range("the red box") is None
