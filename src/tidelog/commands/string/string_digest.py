"""Redis 8.4's string conditions, shared by SET (in :mod:`.strings`) and
DELEX (in :mod:`.string_conditions`): IFEQ/IFNE compare the value,
IFDEQ/IFDNE its digest, the XXH3-64 hash DIGEST answers (from the
``xxhash`` package)."""

from __future__ import annotations

import xxhash

CONDITIONS = (b"IFEQ", b"IFNE", b"IFDEQ", b"IFDNE")


def digest_of(value: bytes) -> bytes:
    """DIGEST's text: the XXH3-64 of the value, 16 lower-case hex digits.  O(N)."""
    return b"%016x" % xxhash.xxh3_64_intdigest(value)


def condition_holds(current: bytes | None, option: bytes, arg: bytes) -> bool:
    """Whether a string (None: no key) meets an IF* condition.  A missing key
    meets the "not equal" ones only; digests compare case-insensitively."""
    if current is None:
        return option in (b"IFNE", b"IFDNE")
    if option in (b"IFEQ", b"IFNE"):
        equal = current == arg
    else:
        equal = digest_of(current) == arg.lower()
    return equal == (option in (b"IFEQ", b"IFDEQ"))
