"""The slot check cluster mode attaches to the engine (its implementation:
:class:`tidelog.cluster.routing.Router`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

from ..commands import table
from ..commands.contract import ClientState


class SlotRouter(Protocol):
    """Cluster mode's slot check (:class:`tidelog.cluster.routing.Router`):
    the engine holds one in ``slot_router`` while cluster mode is on (None
    otherwise, and admission then pays one attribute test).  Each method
    answers the error the client gets instead, or None when this node
    serves the command.  ``db`` is where keys are looked up (``peek``)."""

    def check(self, client: ClientState, spec: table.CommandSpec, argv: list[bytes],
              db: Any, write: bool | None = None) -> bytes | None:
        """A client's command (at EXEC: every queued command); ``write``:
        whether it writes when its flags do not say (a script's shebang)."""

    def check_script_call(self, caller: ClientState, spec: table.CommandSpec,
                          argv: list[bytes], db: Any, cross_slot: bool) -> bytes | None:
        """A command a script runs for ``caller``: the script's errors."""

    def blocked_refusal(self, client: ClientState, keys: Iterable[bytes], db: Any,
                        is_write: bool) -> bytes | None:
        """A client blocked on ``keys``: MOVED or CLUSTERDOWN once their
        slot is not served here."""
