"""LOLWUT: the version's piece of computer art (https://redis.io/commands/lolwut).

``LOLWUT [VERSION v] [arguments ...]`` picks the piece by version the way
Redis does: 5 draws Georg Nees's "Schotter" (squares in a grid, more and
more disordered further down) in Braille dots, 6 a coloured landscape of
terminal cells, 8 (the default of an 8.x server) a short generated poem;
any other version only the line ``Redis ver. <version>``.  The art is
Tidelog's own, drawn anew on every call; the lines that close pieces 5 and
6 and the version line are Redis's.  The reply is a verbatim string
(``txt``) in RESP3, a bulk string in RESP2.

Cost: O(columns x rows) of the picture asked for, bounded by MAX_DOTS
and MAX_SQUARES (piece 5) and MAX_CELLS (piece 6): a larger picture is clipped at the
bottom; O(1) otherwise.
"""

from __future__ import annotations

import math
import random

from ... import REDIS_VERSION
from ...resp.replies import Verbatim
from ..args import parse_int
from ..contract import Ctx, Reply
from ..table import command

SCHOTTER_CREDIT = "Georg Nees - schotter, plotter on paper, 1968. Redis ver. "
LANDSCAPE_CREDIT = ("Dedicated to the 8 bit game developers of past and present.\n"
                    "Original 8 bit image from Plaguemon by hikikomori. Redis ver. ")


def _clamp(value: int, low: int, high: int) -> int:
    return low if value < low else high if value > high else value


# -- a dot canvas, shown as Braille cells (2 x 4 dots each) -------------------------
# Bit of each dot of a cell in the Unicode Braille block (U+2800 + bits).
_BRAILLE_BITS = ((0x01, 0x08), (0x02, 0x10), (0x04, 0x20), (0x40, 0x80))


class Canvas:
    """width x height dots, all clear at first."""

    def __init__(self, width: int, height: int) -> None:
        self.width = width
        self.height = height
        self.dots = bytearray(width * height)

    def set(self, x: int, y: int) -> None:
        if 0 <= x < self.width and 0 <= y < self.height:
            self.dots[x + y * self.width] = 1

    def get(self, x: int, y: int) -> int:
        if 0 <= x < self.width and 0 <= y < self.height:
            return self.dots[x + y * self.width]
        return 0

    def line(self, x1: int, y1: int, x2: int, y2: int) -> None:
        """Bresenham's line, both ends included."""
        dx, dy = abs(x2 - x1), -abs(y2 - y1)
        sx, sy = (1 if x1 < x2 else -1), (1 if y1 < y2 else -1)
        err = dx + dy
        while True:
            self.set(x1, y1)
            if x1 == x2 and y1 == y2:
                return
            e2 = 2 * err
            if e2 >= dy:
                err += dy
                x1 += sx
            if e2 <= dx:
                err += dx
                y1 += sy

    def square(self, cx: int, cy: int, side: float, angle: float) -> None:
        """The outline of a square of ``side`` dots centred on (cx, cy),
        turned by ``angle`` radians."""
        radius = side / math.sqrt(2)
        corners = [(round(cx + radius * math.cos(angle + math.pi / 4 + k * math.pi / 2)),
                    round(cy + radius * math.sin(angle + math.pi / 4 + k * math.pi / 2)))
                   for k in range(4)]
        for k in range(4):
            self.line(*corners[k], *corners[(k + 1) % 4])

    def braille(self) -> str:
        """The canvas as lines of Braille cells, 2 x 4 dots each.  O(dots)."""
        width, height, dots = self.width, self.height, self.dots
        rows = []
        for top in range(0, height, 4):
            cells = []
            lines = [dots[y * width:(y + 1) * width] if y < height else bytes(width)
                     for y in range(top, top + 4)]
            for left in range(0, width, 2):
                bits = 0
                for dy in range(4):
                    line = lines[dy]
                    if line[left]:
                        bits |= _BRAILLE_BITS[dy][0]
                    if left + 1 < width and line[left + 1]:
                        bits |= _BRAILLE_BITS[dy][1]
                cells.append(chr(0x2800 + bits))
            rows.append("".join(cells))
        return "\n".join(rows) + "\n"


# Bounds on the work one call may do (the event loop waits for it): Redis
# draws whatever was asked (a VERSION 5 of 1000 columns and 1 x 200 squares is
# an 800-million-dot canvas there); Tidelog clips the picture at the bottom.
MAX_DOTS = 250_000
MAX_SQUARES = 3_000
MAX_CELLS = 100_000


def schotter(columns: int, per_row: int, per_col: int, rng: random.Random) -> str:
    """Piece 5: ``per_row`` x ``per_col`` squares filling ``columns``
    terminal columns, each row turned and shifted more at random than the
    one above it."""
    width = columns * 2
    side = width / per_row
    canvas = Canvas(width, min(int(side * per_col) + 4, max(4, MAX_DOTS // width)))
    for row in range(per_col):
        if row * side > canvas.height or row * per_row >= MAX_SQUARES:  # clipped
            break
        disorder = row / max(1, per_col - 1)
        for col in range(per_row):
            angle = rng.uniform(-1, 1) * disorder * math.pi / 4
            shift = rng.uniform(-1, 1) * disorder * side / 6
            canvas.square(round(col * side + side / 2 + shift), round(row * side + side / 2 + 2),
                          side * 0.8, angle)
    return canvas.braille()


# Terminal colours of the landscape, far to near: sky, hills, fields.
_LAYERS = ((97, 107), (37, 47), (90, 100), (30, 40))


def landscape(columns: int, rows: int, rng: random.Random) -> str:
    """Piece 6: ``columns`` x ``rows`` coloured cells, a sky over three
    ridges of hills whose heights wander at random (at most MAX_CELLS
    cells: rows past that are clipped)."""
    rows = min(rows, max(1, MAX_CELLS // columns))
    ridges = []
    for layer in range(1, len(_LAYERS)):
        level = rows * layer / len(_LAYERS)
        heights = []
        for _ in range(columns):
            level = min(rows, max(0, level + rng.choice((-1, 0, 0, 1))))
            heights.append(level)
        ridges.append(heights)
    cell = [f"\033[0;{fg};{bg}m \033[0m" for fg, bg in _LAYERS]
    out = []
    for y in range(rows):
        out.append("".join(cell[(y >= a) + (y >= b) + (y >= c)]
                           for a, b, c in zip(*ridges)))
    return "\n".join(out) + "\n"


# Piece 8: lines of three parts from three groups of images; each line picks
# a group other than the one before it.
_IMAGES = (
    ("the tide", "comes in", "over the sand"),
    ("a ledger", "of small events", "kept in order"),
    ("the last entry", "is never", "the last"),
    ("a reader", "waits", "for what has not been written"),
    ("every id", "a moment", "and its sequence"),
    ("the old pages", "are carried", "to the archive"),
    ("the water", "withdraws", "leaving the shells"),
    ("a group", "of patient consumers", "acknowledges"),
    ("what was read", "is not", "forgotten"),
)


def poem(rng: random.Random) -> str:
    """Piece 8: a stanza of six lines in capitals, each made of parts of
    different images."""
    lines = []
    last = -1
    for _ in range(6):
        group = rng.choice([g for g in range(3) if g != last])
        last = group
        parts = [rng.choice(_IMAGES[group * 3:group * 3 + 3])[k] for k in range(3)]
        lines.append(" " + "   ".join(parts).upper() + " ")
    return "\n".join(lines) + "\n\nA poem of the log, new on every call. Redis ver. " \
        + REDIS_VERSION + "\n"


@command("lolwut", arity=-1, flags="readonly fast", group="server", since="5.0.0",
         complexity="O(N) where N is the size of the picture drawn",
         summary="Display some computer art and the Redis version",
         categories=("@read",))
def lolwut(ctx: Ctx, argv: list[bytes]) -> Reply:
    """LOLWUT [VERSION version]

    Cost: see the module docstring."""
    args = argv[1:]
    version = int(REDIS_VERSION.split(".")[0])
    if len(args) >= 2 and args[0].lower() == b"version":
        version = parse_int(args[1]) & 0xFFFFFFFF  # as Redis: its %u of the value
        args = args[2:]
    rng = random.Random()
    if version == 5:
        numbers = [parse_int(a) for a in args[:3]]
        columns, per_row, per_col = numbers + [66, 8, 12][len(numbers):]
        text = (schotter(_clamp(columns, 1, 1000), _clamp(per_row, 1, 200),
                         _clamp(per_col, 1, 200), rng)
                + "\n" + SCHOTTER_CREDIT + REDIS_VERSION + "\n")
    elif version == 6:
        numbers = [parse_int(a) for a in args[:2]]
        columns, rows = numbers + [80, 40][len(numbers):]
        text = (landscape(_clamp(columns, 1, 1000), _clamp(rows, 1, 1000), rng)
                + LANDSCAPE_CREDIT + REDIS_VERSION + "\n")
    elif version == 8:
        text = poem(rng)
    else:
        text = "Redis ver. " + REDIS_VERSION + "\n"
    return Verbatim(text.encode())
