"""The pixels of a scripted video: a room, the event's text on a light panel, a coloured shape
and one figure per person, encoded as H.264 (with the sound track muxed in when there is one)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import imageio_ffmpeg
from PIL import Image, ImageDraw, ImageFont

from videomem.synth.vocabulary import COLOURS, LOCATIONS


@dataclass(frozen=True)
class Shot:
    """What one stretch of video shows."""

    location: str
    text: str | None = None
    colour: str | None = None
    people: int = 0


def encode(
    path: Path, shots: list[tuple[Shot, float]], size: tuple[int, int], fps: int, sound: Path | None = None
) -> None:
    """H.264 at a low frame rate with a keyframe every second: small files, fast to write and seek.
    `sound`: a WAV as long as the shots, muxed in as AAC (the frames are encoded alike)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    writer = imageio_ffmpeg.write_frames(
        str(path),
        size,
        fps=fps,
        codec="libx264",
        quality=None,
        macro_block_size=1,
        ffmpeg_log_level="error",
        output_params=["-g", str(fps), "-preset", "veryfast", "-crf", "20", "-threads", "1"],
        audio_path=None if sound is None else str(sound),
        audio_codec=None if sound is None else "aac",
    )
    writer.send(None)
    try:
        for shot, seconds in shots:
            frame = _render(shot, size)
            for _ in range(int(round(seconds * fps))):
                writer.send(frame)
    finally:
        writer.close()


@lru_cache(maxsize=256)
def _render(shot: Shot, size: tuple[int, int]) -> bytes:
    return _image(shot, size).tobytes()


def _image(shot: Shot, size: tuple[int, int] = (640, 360)) -> Image.Image:
    """Background and header by location; the event as dark text on a light panel; a shape in the
    event's colour; one simple figure per person."""
    width, height = size
    image = Image.new("RGB", size, LOCATIONS[shot.location])
    draw = ImageDraw.Draw(image)
    _draw_room(draw, shot.location, width, height)
    header = int(height * 0.14)
    draw.rectangle([0, 0, width, header], fill=(28, 28, 28))
    draw.text((width / 2, header / 2), shot.location, font=_font(int(height * 0.09)), fill=(255, 255, 255), anchor="mm")
    if shot.text:
        box = (int(width * 0.04), int(height * 0.2), int(width * 0.96), int(height * 0.62))
        draw.rectangle(box, fill=(246, 246, 240))
        lines, font = _fit(shot.text, box[2] - box[0] - int(width * 0.04), height)
        draw.multiline_text(
            ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2),
            "\n".join(lines),
            font=font,
            fill=(12, 12, 12),
            anchor="mm",
            align="center",
            spacing=int(height * 0.03),
            stroke_width=1,
            stroke_fill=(12, 12, 12),
        )
    if shot.colour:
        draw.rectangle(
            [int(width * 0.08), int(height * 0.68), int(width * 0.32), int(height * 0.95)], fill=COLOURS[shot.colour]
        )
    for i in range(shot.people):
        x = int(width * (0.62 + 0.14 * i))
        head = int(height * 0.05)
        draw.ellipse([x - head, int(height * 0.67), x + head, int(height * 0.67) + 2 * head], fill=(235, 200, 170))
        draw.rectangle([x - int(head * 1.3), int(height * 0.67) + 2 * head, x + int(head * 1.3), int(height * 0.97)],
                       fill=(40, 40, 60))
    return image


def _draw_room(draw: ImageDraw.ImageDraw, location: str, width: int, height: int) -> None:
    """A floor band and a location-specific pattern, so rooms differ beyond their colour."""
    base = LOCATIONS[location]
    darker = tuple(int(c * 0.7) for c in base)
    draw.rectangle([0, int(height * 0.64), width, height], fill=darker)
    pattern = list(LOCATIONS).index(location)
    lighter = tuple(min(255, int(c * 1.2)) for c in base)
    for k in range(1, 6):
        if pattern % 2:
            x = int(width * k / 6)
            draw.line([x, int(height * 0.64), x, height], fill=base, width=3)
        else:
            y = int(height * (0.64 + 0.06 * k))
            draw.line([0, y, width, y], fill=lighter, width=2)


@lru_cache(maxsize=64)
def _font(pixels: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default(size=pixels)


def _fit(text: str, max_width: int, height: int) -> tuple[list[str], ImageFont.FreeTypeFont | ImageFont.ImageFont]:
    """One line when it fits at a readable size, else two balanced lines."""
    largest, smallest = int(height * 0.11), int(height * 0.075)
    words = text.split()
    candidates = [[text]] + [
        [" ".join(words[:k]), " ".join(words[k:])]
        for k in sorted(range(1, len(words)), key=lambda k: abs(len(" ".join(words[:k])) - len(text) / 2))
    ]
    for lines in candidates:
        for pixels in range(largest, smallest - 1, -2):
            font = _font(pixels)
            if max(font.getlength(line) for line in lines) <= max_width:
                return lines, font
    font = _font(smallest)
    return candidates[-1], font
