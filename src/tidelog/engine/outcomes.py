"""What running a command may answer besides a reply: the client now
blocks (:data:`BLOCKED`), CLIENT PAUSE holds the command back
(:data:`POSTPONED`), the batch loop stopped before it (:data:`NOT_RUN`), or
the connection must close at once (:data:`ABORTED`), or the command goes on
outside the loop and answers later (:data:`PARKED`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass


class _Blocked:
    """What execute() answers when the client now waits for data."""

    def __repr__(self) -> str:
        return "BLOCKED"


BLOCKED = _Blocked()


class _Postponed:
    """What execute() answers when CLIENT PAUSE holds the command back: the
    connection keeps it (and what follows) until ``client.resume()``."""

    def __repr__(self) -> str:
        return "POSTPONED"


POSTPONED = _Postponed()


class _NotRun:
    """What execute_many() answers for the command it stopped at without
    running it: the caller runs that one through execute() (or a run)."""

    def __repr__(self) -> str:
        return "NOT_RUN"


NOT_RUN = _NotRun()


class _Aborted:
    """What execute() answers for a command after which the connection must
    close at once, nothing more of its read run nor answered (the cross
    protocol scripting guard: :meth:`Engine.cross_protocol`)."""

    def __repr__(self) -> str:
        return "ABORTED"


ABORTED = _Aborted()


class _Parked:
    """What execute() answers when the command goes on outside the call (a
    chunked MIGRATE: engine/parking.py): the client gets its reply, and
    its further commands run, once ``Engine.unpark`` sends the reply."""

    def __repr__(self) -> str:
        return "PARKED"


PARKED = _Parked()
