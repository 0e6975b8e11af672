"""The engine: executes one command for one client and says what happened.

``Engine.execute(client, argv)`` returns a reply value, or :data:`BLOCKED`
when the client now waits for data (``XREAD BLOCK``).  It owns the things
that are about commands rather than about any one command: the checks Redis
makes before running a command, the call itself, transactions, blocking,
effects, clients and ACL, the operator's state, notifications and the cron.

The handlers' side of the contract (:class:`Ctx`, :class:`Wait`,
:class:`ClientState`) is :mod:`tidelog.commands.contract`; the engine imports
the command table, never the other way.  Durability is not the engine's: it
holds a :class:`~tidelog.commands.contract.Persistence` (``persistence``),
which the durability layer replaces when it is attached.  The engine never
touches sockets: a client is a :class:`ClientState`; the server gives each
one a ``send`` callback for replies that arrive later (a blocked client being
served), and a scheduler for timeouts.

# Layout

* ``core``: :class:`Engine`, the façade: its state and its method table.
* ``base``: ``EngineCore``, the state and the methods' prototypes the
  modules share; the operator's state and INFO's rates.
* ``entry``: ``Entry`` (a command as the engine runs it) and ``Waiter``.
* ``dispatch``: the name cache,
  rename-command, arity (``_resolve``), runs' keys.
* ``admission``: whether a command may run now (the refusals Redis's
  ``processCommand`` makes, in its order).
* ``call``: running a command: statistics, slowlog, latency, failures,
  blocking, effects, monitors, tracking, HOTKEYS; the entry points.
* ``effects``: handing effects to the AOF and the replicas.
* ``transactions``: MULTI, EXEC, WATCH.
* ``blocking``: waiters, ready keys, timeouts.
* ``clients``: clients, users, ACL changes and the ACL LOG.
* ``operator``: MONITOR, SLOWLOG, LATENCY, CLIENT PAUSE, HOTKEYS, metrics.
* ``notify``: keyspace notifications, expired keys.
* ``housekeeping``: the cron, maxmemory and eviction, lazy free, IDMP expiry.
* ``services``: the stand-ins for persistence and replication.
* ``outcomes``: :data:`BLOCKED`, :data:`POSTPONED`, :data:`NOT_RUN`, :data:`ABORTED`,
  :data:`PARKED`.
* ``parking``: parked commands (a chunked MIGRATE), the keys in flight.

# Methods as functions of ``self``

``Engine``'s methods are written in these modules as plain functions whose
first parameter is ``self: EngineCore`` and bound in ``core.Engine``'s class
body (``execute = call.execute``).  At run time that is exactly a method: no
attribute hop is added on the command path, as composition (``engine.calls``,
``engine.blocking`` ...) would add.  Mixin classes would do the same at run
time, but the type checker could not check one mixin's calls to another's
methods.  ``base.EngineCore`` is the shared annotated base: the state and
the methods' prototypes, which the type checker holds ``Engine`` to; the
modules import it, never ``core``, so no import runs in a circle.
"""

from ..commands.contract import ClientState, Ctx, Wait
from ..commands.replies import repr_arg
from .admission import CROSS_PROTOCOL_NAMES, CROSS_PROTOCOL_WARNING
from .base import Rate
from .core import Engine
from .entry import Waiter
from .housekeeping import IDMP_EXPIRE_BUDGET
from .operator import monitor_args
from .outcomes import ABORTED, BLOCKED, NOT_RUN, PARKED, POSTPONED

__all__ = ["ABORTED", "BLOCKED", "CROSS_PROTOCOL_NAMES", "CROSS_PROTOCOL_WARNING", "IDMP_EXPIRE_BUDGET",
           "NOT_RUN", "PARKED", "POSTPONED", "ClientState", "Ctx", "Engine", "Rate", "Wait", "Waiter",
           "monitor_args", "repr_arg"]
