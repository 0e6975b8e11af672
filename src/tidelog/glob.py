"""Redis's glob patterns (KEYS, SCAN MATCH, PSUBSCRIBE, ACL key and channel
patterns, CONFIG GET ...): ``*``, ``?``, ``[abc]``, ``[^a]``, ``[a-z]`` and
``\\x``, matched byte for byte as Redis's ``stringmatchlen`` does.  A pure
function with a small cache of compiled patterns; nothing else."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

_STAR = ("*",)
_ANY = ("?",)


@lru_cache(maxsize=256)
def _compile(pattern: bytes, nocase: bool) -> tuple[tuple[Any, ...], ...]:
    """Pattern -> tokens: STAR, ANY, ("=", byte) or ("[", negate, items).

    Follows stringmatchlen's reading of the pattern exactly, quirks
    included: ``\\`` escapes the next byte (a trailing ``\\`` is literal), a
    class runs to ``]`` or to the end of the pattern, ``x-y`` is a range
    even when y is ``]`` (which then does not close the class), and a range
    given backwards is swapped."""
    low = (lambda b: b | 0x20 if 0x41 <= b <= 0x5A else b) if nocase else (lambda b: b)
    tokens: list[tuple[Any, ...]] = []
    n, i = len(pattern), 0
    while i < n:
        c = pattern[i]
        if c == 0x2A:  # *
            if not tokens or tokens[-1] is not _STAR:
                tokens.append(_STAR)
            i += 1
        elif c == 0x3F:  # ?
            tokens.append(_ANY)
            i += 1
        elif c == 0x5B:  # [
            i += 1
            negate = i < n and pattern[i] == 0x5E  # ^
            if negate:
                i += 1
            items: list[tuple[int, int]] = []
            while True:
                if i < n and pattern[i] == 0x5C and n - i >= 2:  # \x
                    i += 1
                    items.append((low(pattern[i]), low(pattern[i])))
                elif i < n and pattern[i] == 0x5D:  # ]
                    break
                elif i >= n:  # unterminated: the class ends with the pattern
                    i = n - 1
                    break
                elif n - i >= 3 and pattern[i + 1] == 0x2D:  # x-y
                    lo, hi = low(pattern[i]), low(pattern[i + 2])
                    items.append((min(lo, hi), max(lo, hi)))
                    i += 2
                else:
                    items.append((low(pattern[i]), low(pattern[i])))
                i += 1
            tokens.append(("[", negate, tuple(items)))
            i += 1
        else:
            if c == 0x5C and n - i >= 2:  # \x
                i += 1
            tokens.append(("=", low(pattern[i])))
            i += 1
    return tuple(tokens)


def _one(token: tuple[Any, ...], c: int) -> bool:
    if token is _ANY:
        return True
    if token[0] == "=":
        return token[1] == c
    hit = any(lo <= c <= hi for lo, hi in token[2])
    return hit != token[1]


# Redis's stringmatchlen recurses once per ``*`` (runs of stars count once, a
# final one not at all) and gives up, matching nothing, past 1,000 levels:
# its protection against abusive patterns, kept so the answers are the same.
_MAX_NESTING = 1000


@lru_cache(maxsize=256)
def _stars_past_limit(tokens: tuple[tuple[Any, ...], ...]) -> bool:
    stars = sum(1 for t in tokens if t is _STAR)
    if tokens and tokens[-1] is _STAR:
        stars -= 1
    return stars > _MAX_NESTING


def glob_match(pattern: bytes, text: bytes, nocase: bool = False) -> bool:
    """Redis's glob: ``*``, ``?``, ``[abc]``, ``[^a]``, ``[a-z]``, ``\\x``.

    O(len(pattern) * len(text)) in the worst case (backtracking to the last
    ``*`` only), unlike a naive recursive matcher."""
    if pattern == b"*":
        return True
    tokens = _compile(pattern, nocase)
    if _stars_past_limit(tokens):
        return False
    if nocase:
        text = text.lower()
    ti = si = 0
    star_ti, star_si = -1, 0
    nt, ns = len(tokens), len(text)
    while si < ns:
        if ti < nt:
            token = tokens[ti]
            if token is _STAR:
                star_ti, star_si = ti, si
                ti += 1
                continue
            if _one(token, text[si]):
                ti += 1
                si += 1
                continue
        if star_ti < 0:
            return False
        star_si += 1
        si, ti = star_si, star_ti + 1
    while ti < nt and tokens[ti] is _STAR:
        ti += 1
    return ti == nt
