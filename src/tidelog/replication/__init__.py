"""Replication: a primary's side (``primary``: replicas, the stream, WAIT;
``backlog``: the stream's newest bytes with their offsets).

The replication commands (REPLCONF, PSYNC, SYNC, WAIT, WAITAOF, REPLICAOF,
ROLE, FAILOVER) are in the command layer; the primary does their work,
through the engine's ``replication`` interface.
"""
