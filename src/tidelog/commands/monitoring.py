"""The operator's view of the server: MONITOR, SLOWLOG and LATENCY.

MONITOR makes the calling client a monitor: the engine shows it every
command run afterwards (``Engine.feed_monitors``), in Redis's line format.
"""

from __future__ import annotations

from ..errors import MONITOR_DENY_BLOCKING, CommandError
from ..resp.replies import OK, RawReply
from .contract import Ctx
from .table import command


# =====================================================================================
# MONITOR
# =====================================================================================
@command("monitor", arity=1, flags="admin noscript loading stale", group="server",
         since="1.0.0", complexity="O(1)",
         summary="Listen for all requests received by the server in real-time")
def monitor(ctx: Ctx, argv: list[bytes]) -> object:
    """MONITOR"""
    if not ctx.may_block:  # inside MULTI
        raise CommandError(MONITOR_DENY_BLOCKING)
    if ctx.client.monitor:  # a monitor already: Redis answers nothing
        return RawReply(b"")
    ctx.engine.add_monitor(ctx.client)
    return OK
