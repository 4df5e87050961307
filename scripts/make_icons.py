"""Draws the installable inbox's icons (192 and 512 px, maskable) into ask_mcp/static/ask_mcp/icons/.

Run once when the design changes (`python scripts/make_icons.py`); the PNGs are committed. Pure
Python (zlib and struct), so no imaging library is a dependency. The mark, a white speech
bubble with three dots on the inbox's accent blue, stays inside the central 80% circle that a
maskable icon keeps whatever shape a launcher cuts (the W3C manifest's safe zone: radius 40%).
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path
from typing import Final

OUT: Final = Path(__file__).resolve().parents[1] / "ask_mcp" / "static" / "ask_mcp" / "icons"
"""Where the icons go (served as static files, named by the manifest)."""
ACCENT: Final = (0x1A, 0x56, 0xB0)
"""The inbox's light accent (inbox.css --accent): white on it has a contrast of 7:1."""
WHITE: Final = (0xFF, 0xFF, 0xFF)
SIZES: Final = (192, 512)
"""The sizes installability asks for (Chromium wants 192 and 512)."""


def _pixel(x: float, y: float) -> tuple[int, int, int]:
    """The colour at (x, y) in a unit square (0..1): the bubble, its tail, its dots."""
    cx, cy, rx, ry = 0.5, 0.46, 0.27, 0.2
    dots = [(0.40, 0.46), (0.5, 0.46), (0.60, 0.46)]
    if any((x - dx) ** 2 + (y - dy) ** 2 < 0.035**2 for dx, dy in dots):
        return ACCENT
    if ((x - cx) / rx) ** 2 + ((y - cy) / ry) ** 2 <= 1:
        return WHITE
    # The tail: a triangle below the bubble's lower left.
    if 0.6 <= y <= 0.74 and 0.36 <= x <= 0.48 - (y - 0.6) * 0.8:
        return WHITE
    return ACCENT


def png(size: int) -> bytes:
    """The icon at `size` by `size` as PNG bytes (8-bit RGB, 2 by 2 supersampled edges)."""
    rows = bytearray()
    for row in range(size):
        rows.append(0)  # filter: none
        for column in range(size):
            samples = [
                _pixel((column + dx) / size, (row + dy) / size)
                for dx in (0.25, 0.75)
                for dy in (0.25, 0.75)
            ]
            rows.extend(sum(s[i] for s in samples) // 4 for i in range(3))

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(bytes(rows), 9))
        + chunk(b"IEND", b"")
    )


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for size in SIZES:
        (OUT / f"icon-{size}.png").write_bytes(png(size))


if __name__ == "__main__":
    main()
