"""Replication: a primary's side (``primary``: replicas, the stream, WAIT;
``backlog``: the stream's newest bytes with their offsets).

Importing this package registers the replication commands
(``commands``: REPLCONF, PSYNC, SYNC, WAIT, ROLE).
"""

from . import commands  # noqa: F401  (registers the replication commands)
