"""Accuracy and temporal IoU against numbers worked out by hand (reading replies: test_choice.py)."""

import pytest

from videomem.eval.scoring import accuracy, per_category, temporal_iou


def test_accuracy_and_per_category_count_each_tag_once():
    assert accuracy([True, False, True, True]) == 0.75
    assert accuracy([]) == 0.0
    rows = [(["x", "y"], True), (["x"], False), (["y", "y"], True), (["z"], False)]
    # x: 1 of 2; y: 2 of 2 (the duplicated tag counts once); z: 0 of 1
    assert per_category(rows) == {"x": (1, 2), "y": (2, 2), "z": (0, 1)}


def test_tiou_unions_overlapping_evidence():
    # E = [10, 20] ∪ [15, 30] = [10, 30]; T = [20, 40]; ∩ = 10 s; ∪ = 30 s.
    assert temporal_iou([("v", 10, 20), ("v", 15, 30)], [(20, 40)], "v") == pytest.approx(1 / 3)


def test_tiou_evidence_from_another_video_only_grows_the_union():
    # Same video: [20, 40] matches T exactly (20 s); the other video's 20 s adds to ∪ only.
    assert temporal_iou([("v", 20, 40), ("w", 0, 20)], [(20, 40)], "v") == pytest.approx(0.5)


def test_tiou_point_target_is_a_window():
    # T = 100 ± 15 = [85, 115]; E = [90, 120]; ∩ = 25; ∪ = 35.
    assert temporal_iou([("DAY1_A1_JAKE_00013000", 90, 120)], [(100, 100)], None) == pytest.approx(25 / 35)
    # Two disjoint targets, evidence covering one of them: ∩ = 10, ∪ = 10 + 10 + 5 = 25.
    assert temporal_iou([(None, 0, 15)], [(0, 10), (50, 60)], None) == pytest.approx(10 / 25)


def test_tiou_without_targets_or_evidence():
    assert temporal_iou([("v", 0, 10)], [], "v") is None
    assert temporal_iou([], [(0, 10)], "v") == 0.0
