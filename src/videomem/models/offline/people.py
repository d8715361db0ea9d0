"""People with OpenCV's HOG + linear SVM pedestrian detector (weights ship inside OpenCV).

The detector's window is 64×128 pixels, so frames are enlarged (up to 1.5×) to find people
down to a fifth or a quarter of the frame's height; it sees upright, mostly whole bodies and misses seated, partly hidden
or very small people, and a frame too small for the window even when enlarged is reported as having
nobody. Its raw output has duplicates and "group" boxes around several people;
both are removed here.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import cv2
import numpy as np

DETECT_HEIGHT = 720
"""Frames are scaled so their height is about this many pixels (at most 1.5×) before detection."""
MAX_UPSCALE = 1.5
PYRAMID_STEP = 1.1
"""Scale step between detection passes; 1.05 finds ~15 % more people on vtest.avi at twice the cost."""
MIN_WEIGHT = 0.5
"""SVM margin below which a window is not reported as a person."""
WINDOW = (64, 128)
"""The default people detector's window (width, height) in pixels."""


@dataclass(frozen=True)
class Box:
    x0: float
    y0: float
    x1: float
    y1: float
    score: float

    @property
    def area(self) -> float:
        return max(0.0, self.x1 - self.x0) * max(0.0, self.y1 - self.y0)

    @property
    def centre(self) -> tuple[float, float]:
        return (self.x0 + self.x1) / 2, (self.y0 + self.y1) / 2

    def intersection(self, other: Box) -> float:
        w = min(self.x1, other.x1) - max(self.x0, other.x0)
        h = min(self.y1, other.y1) - max(self.y0, other.y0)
        return max(0.0, w) * max(0.0, h)

    def iou(self, other: Box) -> float:
        inter = self.intersection(other)
        return inter / (self.area + other.area - inter) if inter else 0.0

    def contains_point(self, x: float, y: float) -> bool:
        return self.x0 <= x <= self.x1 and self.y0 <= y <= self.y1


class PeopleDetector:
    """HOG people detector, built once."""

    @cached_property
    def _hog(self) -> cv2.HOGDescriptor:
        hog = cv2.HOGDescriptor()
        hog.setSVMDetector(cv2.HOGDescriptor_getDefaultPeopleDetector())
        return hog

    def detect(self, rgb: np.ndarray) -> list[Box]:
        """People in one RGB frame, boxes in that frame's pixels, left to right."""
        scale = min(MAX_UPSCALE, DETECT_HEIGHT / rgb.shape[0])
        image = cv2.resize(rgb, None, fx=scale, fy=scale, interpolation=cv2.INTER_LINEAR) if scale > 1 else rgb
        scale = max(scale, 1.0)
        if image.shape[1] < WINDOW[0] or image.shape[0] < WINDOW[1]:
            return []  # no window fits, and OpenCV's detectMultiScale crashes the process on such a frame
        rects, weights = self._hog.detectMultiScale(image, winStride=(8, 8), padding=(8, 8), scale=PYRAMID_STEP)
        found = [
            Box(x / scale, y / scale, (x + w) / scale, (y + h) / scale, float(score))
            for (x, y, w, h), score in zip(np.asarray(rects).reshape(-1, 4), np.ravel(weights))
            if score >= MIN_WEIGHT
        ]
        return sorted(_suppress(_drop_group_boxes(found)), key=lambda b: (b.x0, b.y0))


def _drop_group_boxes(boxes: list[Box]) -> list[Box]:
    """A window that holds the centres of two or more other detections frames a group, not a person."""
    return [
        box
        for box in boxes
        if sum(1 for other in boxes if other is not box and other.area < box.area and box.contains_point(*other.centre)) < 2
    ]


def _suppress(boxes: list[Box]) -> list[Box]:
    """Greedy non-maximum suppression by IoU and by containment (a box mostly inside another)."""
    kept: list[Box] = []
    for box in sorted(boxes, key=lambda b: -b.score):
        if all(box.iou(k) < 0.3 and box.intersection(k) < 0.7 * min(box.area, k.area) for k in kept):
            kept.append(box)
    return kept
