"""On-screen text with RapidOCR (PP-OCR detection + recognition, ONNX models inside the wheel).

Captions quote the text verbatim, so lines are grouped into blocks (lines stacked closely with
horizontal overlap, like a wrapped subtitle; or side by side on one row) and blocks are read top
to bottom, left to right: a sign and a subtitle in one frame stay two separate quotes.

Measured on 230 renderings (8 phrases, 4 fonts, 24-64 px, on a cartoon frame and on a flat
background, white with a dark outline) the recogniser's own text was exact 229 times; the one
miss dropped a space ("ROOM418" in a 24-px font). Rebuilding lines from RapidOCR's word boxes
was tried and made 11 misses ("DRAW ER"), so the text is kept as recognised.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from videomem.errors import ModelError

MIN_SCORE = 0.75
"""Recognition confidence below which a line is dropped (texture read as text is usually lower)."""
MIN_ALNUM = 2
MIN_HEIGHT_FRACTION = 0.02
"""Lines shorter than this fraction of the frame's height are too small to read reliably."""
DETECT_MAX_SIDE = 640


@dataclass(frozen=True)
class TextLine:
    text: str
    score: float
    box: tuple[float, float, float, float]
    """x0, y0, x1, y1 in pixels of the frame that was read."""

    @property
    def height(self) -> float:
        return self.box[3] - self.box[1]


@dataclass(frozen=True)
class TextBlock:
    text: str
    box: tuple[float, float, float, float]
    score: float


class OcrReader:
    """RapidOCR built once, on first use, on one thread (on a shared 2-core machine ONNX
    Runtime's default thread pool costs more CPU than it saves: measured 0.19 vs 0.10 s a frame)."""

    @cached_property
    def _engine(self):  # noqa: ANN202 - rapidocr has no public engine type
        try:
            from rapidocr import RapidOCR
        except ImportError as exc:
            raise ModelError(f"offline OCR needs rapidocr and onnxruntime (pip install 'videomem[offline]'): {exc}") from None
        return RapidOCR(
            params={
                "Global.log_level": "error",
                "Global.use_cls": False,
                "Det.limit_type": "max",
                "Det.limit_side_len": DETECT_MAX_SIDE,
                "EngineConfig.onnxruntime.intra_op_num_threads": 1,
                "EngineConfig.onnxruntime.inter_op_num_threads": 1,
            }
        )

    def read(self, rgb: np.ndarray) -> list[TextLine]:
        """Confident text lines of one RGB frame."""
        result = self._engine(np.ascontiguousarray(rgb))
        if result.txts is None or result.boxes is None:
            return []
        frame_height = rgb.shape[0]
        lines = []
        for text, score, quad in zip(result.txts, result.scores, result.boxes):
            text = " ".join(text.split())
            box = (float(quad[:, 0].min()), float(quad[:, 1].min()), float(quad[:, 0].max()), float(quad[:, 1].max()))
            line = TextLine(text, float(score), box)
            if (
                score >= MIN_SCORE
                and sum(ch.isalnum() for ch in text) >= MIN_ALNUM
                and line.height >= MIN_HEIGHT_FRACTION * frame_height
            ):
                lines.append(line)
        return lines


def _joins(a: TextLine, b: TextLine) -> bool:
    """Whether two lines belong to one block: stacked closely, or side by side on one row."""
    height = max(a.height, b.height)
    h_overlap = min(a.box[2], b.box[2]) - max(a.box[0], b.box[0])
    v_overlap = min(a.box[3], b.box[3]) - max(a.box[1], b.box[1])
    v_gap = max(a.box[1], b.box[1]) - min(a.box[3], b.box[3])
    stacked = h_overlap > 0 and v_gap < 0.5 * height
    same_row = v_overlap > 0.5 * min(a.height, b.height) and -h_overlap < 1.5 * height
    return stacked or same_row


def blocks(lines: list[TextLine]) -> list[TextBlock]:
    """Group lines into blocks and return them in reading order (top to bottom, left to right)."""
    group_of = list(range(len(lines)))

    def root(i: int) -> int:
        while group_of[i] != i:
            i = group_of[i]
        return i

    for i in range(len(lines)):
        for j in range(i + 1, len(lines)):
            if _joins(lines[i], lines[j]):
                group_of[root(j)] = root(i)
    groups: dict[int, list[TextLine]] = {}
    for i, line in enumerate(lines):
        groups.setdefault(root(i), []).append(line)
    out = []
    for group in groups.values():
        text = " ".join(line.text for row in _rows([ln.box for ln in group]) for line in (group[i] for i in row))
        box = (
            min(ln.box[0] for ln in group),
            min(ln.box[1] for ln in group),
            max(ln.box[2] for ln in group),
            max(ln.box[3] for ln in group),
        )
        out.append(TextBlock(text, box, min(ln.score for ln in group)))
    return [out[i] for row in _rows([b.box for b in out]) for i in row]


def _rows(boxes: list[tuple[float, float, float, float]]) -> list[list[int]]:
    """Indices of boxes grouped into rows (a box whose vertical centre lies within the row's
    first box), rows top to bottom, each row left to right."""
    rows: list[list[int]] = []
    for i in sorted(range(len(boxes)), key=lambda i: (boxes[i][1], boxes[i][0])):
        centre = (boxes[i][1] + boxes[i][3]) / 2
        for row in rows:
            if boxes[row[0]][1] <= centre <= boxes[row[0]][3]:
                row.append(i)
                break
        else:
            rows.append([i])
    return [sorted(row, key=lambda i: boxes[i][0]) for row in rows]
