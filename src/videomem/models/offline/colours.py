"""Colour names and flat coloured shapes, from pixels alone.

Colours are named by fixed rules in HSV (hue picks the family, saturation and value decide
black / white / gray / brown / pink), not by a learned model: the rules are deterministic,
cheap, and say exactly why a region is called "red". The scripted test videos carry facts as
flat coloured shapes, so a shape finder looks for compact, uniformly coloured regions that
sit fully inside the frame; natural footage rarely has those, which keeps false shapes rare.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

PALETTE = ("red", "orange", "yellow", "green", "blue", "purple", "pink", "brown", "black", "white", "gray")
CHROMATIC = frozenset(PALETTE[:8])
_INDEX = {name: i for i, name in enumerate(PALETTE)}

ANALYSIS_WIDTH = 320
"""Frames are shrunk to this width before naming colours: enough for shapes ≥ 1 % of the frame."""

MIN_COLOUR_SHARE = 0.08
MIN_SHAPE_AREA = 0.004
MAX_SHAPE_AREA = 0.30
MIN_SOLIDITY = 0.9
MAX_SHAPE_VALUE_STD = 0.08
"""Drawn shapes are flat; shaded natural surfaces vary more than this in brightness."""


def shrink(rgb: np.ndarray, width: int = ANALYSIS_WIDTH) -> np.ndarray:
    h, w = rgb.shape[:2]
    if w <= width:
        return rgb
    return cv2.resize(rgb, (width, max(1, round(h * width / w))), interpolation=cv2.INTER_AREA)


def _hsv(rgb: np.ndarray) -> np.ndarray:
    """Float HSV: hue in degrees [0, 360), saturation and value in [0, 1]."""
    return cv2.cvtColor(rgb.astype(np.float32) / 255.0, cv2.COLOR_RGB2HSV)


def name_map(rgb: np.ndarray) -> np.ndarray:
    """Index into PALETTE for every pixel of an RGB uint8 image."""
    hsv = _hsv(rgb)
    h, s, v = hsv[..., 0], hsv[..., 1], hsv[..., 2]
    chroma = s * v
    out = np.full(h.shape, _INDEX["blue"], dtype=np.uint8)
    bands = (
        ((h >= 345) | (h < 12), "red"),
        ((h >= 12) & (h < 42), "orange"),
        ((h >= 42) & (h < 70), "yellow"),
        ((h >= 70) & (h < 165), "green"),
        ((h >= 255) & (h < 315), "purple"),
        ((h >= 315) & (h < 345), "pink"),
    )
    for mask, name in bands:
        out[mask] = _INDEX[name]
    red_or_orange = (out == _INDEX["red"]) | (out == _INDEX["orange"])
    out[(out == _INDEX["orange"]) & ((v < 0.65) | (s < 0.45))] = _INDEX["brown"]
    out[(out == _INDEX["red"]) & (s < 0.5) & (v > 0.7)] = _INDEX["pink"]
    out[red_or_orange & (v < 0.35) & (s < 0.6)] = _INDEX["brown"]
    grey = chroma < 0.12
    out[grey] = _INDEX["gray"]
    out[grey & (v >= 0.8)] = _INDEX["white"]
    out[(v < 0.18) | (grey & (v <= 0.25))] = _INDEX["black"]
    return out


def colour_shares(names: np.ndarray) -> list[tuple[str, float]]:
    """Palette names covering at least MIN_COLOUR_SHARE of the pixels, largest first."""
    counts = np.bincount(names.ravel(), minlength=len(PALETTE)) / max(names.size, 1)
    order = sorted(range(len(PALETTE)), key=lambda i: (-counts[i], i))
    return [(PALETTE[i], float(counts[i])) for i in order if counts[i] >= MIN_COLOUR_SHARE]


def dominant_colours(rgb: np.ndarray, limit: int = 3) -> list[str]:
    """Up to `limit` colour names of an RGB image or crop, most common first."""
    if rgb.size == 0:
        return []
    return [name for name, _ in colour_shares(name_map(shrink(rgb)))[:limit]]


def position_name(cx: float, cy: float) -> str:
    """A 3×3 grid cell for a point given as fractions of the frame's width and height."""
    row = "top" if cy < 1 / 3 else "bottom" if cy > 2 / 3 else ""
    col = "left" if cx < 1 / 3 else "right" if cx > 2 / 3 else ""
    if row and col:
        return f"{row} {col}"
    return row or col or "centre"


def position_phrase(position: str) -> str:
    """A grid cell as a place: 'top left' → 'in the top-left corner', 'left' → 'on the left side'."""
    if position == "centre":
        return "in the centre"
    if position in ("left", "right"):
        return f"on the {position} side"
    if position in ("top", "bottom"):
        return f"at the {position}"
    return f"in the {position.replace(' ', '-')} corner"


def place_name(position: str) -> str:
    """A grid cell as a noun phrase for 'from … to …': 'the top-left corner', 'the left side'."""
    if position in ("left", "right"):
        return f"the {position} side"
    if position in ("centre", "top", "bottom"):
        return f"the {position}"
    return f"the {position.replace(' ', '-')} corner"


@dataclass(frozen=True)
class Shape:
    """A flat coloured shape; coordinates are fractions of the frame (0..1)."""

    colour: str
    kind: str
    """'box', 'circle' or 'triangle'."""
    form: str
    """A describing adjective: 'square', 'rectangular', 'round', 'triangular'."""
    cx: float
    cy: float
    area: float

    @property
    def name(self) -> str:
        return f"{self.colour} {self.kind}"

    @property
    def position(self) -> str:
        return position_name(self.cx, self.cy)


def _classify(contour: np.ndarray, area: float) -> tuple[str, str] | None:
    perimeter = cv2.arcLength(contour, True)
    if perimeter <= 0:
        return None
    corners = len(cv2.approxPolyDP(contour, 0.04 * perimeter, True))
    (_, (rw, rh), _) = cv2.minAreaRect(contour)
    if corners == 4 and rw * rh > 0 and area / (rw * rh) >= 0.85:
        return "box", "square" if 0.8 <= rw / rh <= 1.25 else "rectangular"
    if corners == 3:
        return "triangle", "triangular"
    if 4 * np.pi * area / perimeter**2 >= 0.8:
        return "circle", "round"
    return None


def find_shapes(rgb: np.ndarray) -> list[Shape]:
    """Compact, flat, chromatic regions lying wholly inside the frame, largest first."""
    small = shrink(rgb)
    h, w = small.shape[:2]
    names = name_map(small)
    value = _hsv(small)[..., 2]
    kernel = np.ones((3, 3), np.uint8)
    wide = np.ones((5, 5), np.uint8)
    shapes = []
    for colour in sorted(CHROMATIC, key=_INDEX.get):
        mask = (names == _INDEX[colour]).astype(np.uint8)
        # Closing first joins regions cut apart by thin lines (floor boards, stripes), so a
        # striped background stays one region touching the frame's edge, not a row of "boxes".
        mask = cv2.morphologyEx(cv2.morphologyEx(mask, cv2.MORPH_CLOSE, wide), cv2.MORPH_OPEN, kernel)
        contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        for contour in contours:
            area = cv2.contourArea(contour)
            if not MIN_SHAPE_AREA <= area / (w * h) <= MAX_SHAPE_AREA:
                continue
            x, y, bw, bh = cv2.boundingRect(contour)
            if x <= 1 or y <= 1 or x + bw >= w - 1 or y + bh >= h - 1:
                continue
            hull_area = cv2.contourArea(cv2.convexHull(contour))
            if hull_area <= 0 or area / hull_area < MIN_SOLIDITY:
                continue
            inside = np.zeros((h, w), np.uint8)
            cv2.drawContours(inside, [contour], -1, 1, thickness=-1)
            inside = cv2.erode(inside, kernel) > 0
            if inside.any() and float(value[inside].std()) > MAX_SHAPE_VALUE_STD:
                continue
            kind = _classify(contour, area)
            if kind is None:
                continue
            moments = cv2.moments(contour)
            shapes.append(
                Shape(
                    colour=colour,
                    kind=kind[0],
                    form=kind[1],
                    cx=moments["m10"] / moments["m00"] / w,
                    cy=moments["m01"] / moments["m00"] / h,
                    area=area / (w * h),
                )
            )
    return sorted(shapes, key=lambda s: (-s.area, s.colour, s.cx))
