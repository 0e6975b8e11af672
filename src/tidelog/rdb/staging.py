"""Staged copies: streams arriving in chunks, held beside the keyspace.

A staged copy is what ``TIDELOG.STAGE BEGIN`` opens and the APPENDs feed
(:mod:`tidelog.commands.keys.stage`): a :class:`~.stream_chunks.StreamStager`
plus what installing it needs (key, TTL, REPLACE).  Each database keeps its
own in ``Database.staged`` (token -> :class:`StagedCopy`), never in its
``data``: KEYS, SCAN, DBSIZE, EXISTS, the slot index and every read miss
it.  ``Database.flush`` forgets them with the keys.

Who drops a staged copy, and how every drop is propagated (the same
``TIDELOG.STAGE ABORT <token>``, :func:`abort_argv`): ABORT itself, a bad
chunk, BUSYKEY at commit, the idle deadline (the cron), the owning
connection closing (the engine), FLUSHDB/FLUSHALL, a full resync of a
replica starting, and the end of an AOF load.

Memory: a staged copy keeps the raw chunks it was fed (:attr:`StagedCopy.fed`)
besides what the stager built from them, so that an AOF rewrite can write
its BEGIN and APPENDs again (:func:`rewrite_commands`): while a move is
open its stream costs about twice its size on the target.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from .stream_chunks import StreamStager

STAGE = b"TIDELOG.STAGE"
CAPA = b"tidelog-stage"  # REPLCONF capa: a replica that applies TIDELOG.STAGE


@dataclass(eq=False)
class StagedCopy:
    """One open staged copy (one token of one database)."""

    token: bytes
    key: bytes
    ttl_ms: int                 # the installed key's TTL, relative, 0 none (as RESTORE's)
    idle_ms: int                # dropped when no APPEND came for this long
    replace: bool               # REPLACE: an existing key is overwritten at commit
    owner: int | None           # the connection's client id; None: replication or AOF
    deadline: float             # monotonic seconds (renewed by each APPEND)
    stager: StreamStager = field(default_factory=StreamStager)
    fed: list[bytes] = field(default_factory=list)  # the chunks fed, for AOF rewrite

    def renew(self, now: float) -> None:
        """An APPEND came: the idle deadline moves on.  O(1)."""
        self.deadline = now + self.idle_ms / 1000

    def begin_argv(self) -> list[bytes]:
        """The BEGIN that opens this copy."""
        argv = [STAGE, b"BEGIN", self.token, self.key, b"%d" % self.ttl_ms, b"%d" % self.idle_ms]
        if self.replace:
            argv.append(b"REPLACE")
        return argv


def abort_argv(token: bytes) -> list[bytes]:
    """How a dropped copy is propagated, whatever dropped it."""
    return [STAGE, b"ABORT", token]


def drop(staged: dict[bytes, StagedCopy], which: Callable[[StagedCopy], bool] | None = None
         ) -> list[bytes]:
    """Drop the copies ``which`` selects (every one when None); their
    tokens, for the caller to propagate.  O(copies)."""
    if which is None:
        tokens = list(staged)
        staged.clear()
        return tokens
    tokens = [token for token, copy in staged.items() if which(copy)]
    for token in tokens:
        del staged[token]
    return tokens


def rewrite_commands(staged: dict[bytes, Any]) -> Iterator[list[bytes]]:
    """For an AOF rewrite: each open copy's BEGIN and its APPENDs as fed,
    so that the APPENDs after the rewrite find their token.  O(chunks)."""
    for copy in staged.values():
        yield copy.begin_argv()
        for chunk in copy.fed:
            yield [STAGE, b"APPEND", copy.token, chunk]
