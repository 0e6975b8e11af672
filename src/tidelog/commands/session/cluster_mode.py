"""What a connection says to a cluster node: ASKING, READONLY and READWRITE
(RESTORE-ASKING is beside RESTORE, in :mod:`tidelog.commands.keys.dump`).

Outside cluster mode ASKING, READONLY and READWRITE answer "This instance
has cluster support disabled", as Redis does.  The flags they set are read
by cluster mode's slot check (:mod:`tidelog.cluster.routing`): ASKING's
lasts for the next command (in a transaction: until EXEC), READONLY's until
READWRITE.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...errors import CLUSTER_DISABLED, CommandError
from ...resp.replies import OK
from ..contract import NO_DISPATCH
from ..table import command

if TYPE_CHECKING:
    from ..contract import Ctx


def cluster_enabled(ctx: Ctx) -> bool:
    """The server runs in cluster mode (``cluster-enabled yes``). O(1)."""
    return bool(ctx.engine.config["cluster-enabled"])


@command("asking", arity=1, flags="fast", group="cluster", since="3.0.0", complexity="O(1)",
         summary="Sent by cluster clients after an -ASK redirect",
         categories=("@connection",))
def asking(ctx: Ctx, argv: list[bytes]) -> object:
    """ASKING

    The client's next command may use a slot this node imports.  Cost: O(1)."""
    if not cluster_enabled(ctx):
        raise CommandError(CLUSTER_DISABLED)
    ctx.client.cluster_asking = 1  # engine.admission.ASKING_SET
    ctx.client.dispatch = NO_DISPATCH  # the next command takes admission, which spends it
    return OK


@command("readonly", arity=1, flags="loading stale fast", group="cluster", since="3.0.0",
         complexity="O(1)",
         summary="Enables read queries for a connection to a cluster replica node",
         categories=("@connection",))
def readonly(ctx: Ctx, argv: list[bytes]) -> object:
    """READONLY

    A replica serves this client's reads of its master's slots.  Cost: O(1)."""
    if not cluster_enabled(ctx):
        raise CommandError(CLUSTER_DISABLED)
    ctx.client.cluster_readonly = True
    return OK


@command("readwrite", arity=1, flags="loading stale fast", group="cluster", since="3.0.0",
         complexity="O(1)",
         summary="Disables read queries for a connection to a cluster replica node",
         categories=("@connection",))
def readwrite(ctx: Ctx, argv: list[bytes]) -> object:
    """READWRITE

    Ends READONLY.  Cost: O(1)."""
    if not cluster_enabled(ctx):
        raise CommandError(CLUSTER_DISABLED)
    ctx.client.cluster_readonly = False
    return OK
