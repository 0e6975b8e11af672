"""The topic helper of :mod:`.topic` on asyncio: ``AsyncTopic`` and
``AsyncConsumer`` on ``redis.asyncio.cluster.RedisCluster`` (or
``redis.asyncio.Redis``), the same partitions, routing and semantics.

The difference is in :meth:`AsyncConsumer.read`'s pass: every partition is
read at once (``asyncio.gather``), each ``XREADGROUP`` sent straight to the
node the client's slot map names for its key; the client follows ``MOVED``
and ``ASK`` itself, and after a node it cannot reach it fetches the slot map
again, so the next read finds the new primary.  What the partitions that
answered delivered is returned even when others failed (their errors are in
``AsyncConsumer.errors``; a read that got nothing raises the first).
Partitions never wait for each other, so there is no per-primary pipeline to
build.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from typing import Any

from .topic import ConsumerBase, Message, TopicBase


class AsyncTopic(TopicBase):
    """``count`` partition streams named after ``name`` on an asyncio ``client``.
    :meth:`placement` reads the client's slot map, which an asyncio cluster
    client fetches on its first command (or ``await client.initialize()``)."""

    async def produce(self, key: str | bytes | None, fields: Mapping[Any, Any], *,
                      maxlen: int | None = None,
                      approximate: bool | None = None) -> tuple[str, Any]:
        """XADD ``fields`` to the partition of ``key``: (partition key, entry ID)."""
        stream = self.keys[self.partition_for(key)]
        entry = await self.client.xadd(stream, dict(fields), **self._xadd_args(maxlen, approximate))
        return stream, entry

    async def produce_many(self, messages: Iterable[tuple[str | bytes | None, Mapping[Any, Any]]],
                           *, maxlen: int | None = None,
                           approximate: bool | None = None) -> list[tuple[str, Any]]:
        """XADD each (key, fields) to its partition in one pipeline; the
        (partition key, entry ID) of each, in order."""
        pipe = self.client.pipeline(transaction=False)
        streams = self._queue_xadds(pipe, messages, maxlen, approximate)
        if not streams:
            return []
        return list(zip(streams, await pipe.execute()))

    async def create_group(self, group: str, id: str = "$") -> int:
        """XGROUP CREATE ... MKSTREAM on every partition (BUSYGROUP is not an
        error); the number of groups created."""
        pipe = self.client.pipeline(transaction=False)
        for key in self.keys:
            pipe.xgroup_create(key, group, id=id, mkstream=True)
        return self._created(await pipe.execute(raise_on_error=False))

    def consumer(self, group: str, name: str, *, partitions: Iterable[int] | None = None,
                 block_ms: int = 100, count: int = 100) -> AsyncConsumer:
        """A member ``name`` of ``group`` reading ``partitions`` (every one by default)."""
        return AsyncConsumer(self, group, name, partitions=partitions, block_ms=block_ms,
                             count=count)

    async def lengths(self) -> list[int]:
        """XLEN of every partition, in index order."""
        pipe = self.client.pipeline(transaction=False)
        for key in self.keys:
            pipe.xlen(key)
        return list(await pipe.execute())


class AsyncConsumer(ConsumerBase):
    """One consumer of a group over some or all partitions of a topic, on asyncio."""

    async def read(self, count: int | None = None, block_ms: int | None = None) -> list[Message]:
        """New messages: up to ``count`` per partition from every partition at
        once without blocking; if none, one ``XREADGROUP ... BLOCK block_ms``
        on the next partition in turn (0: do not block)."""
        count = self.count if count is None else count
        block_ms = self.block_ms if block_ms is None else block_ms
        if hasattr(self.client, "get_node_from_key"):
            await self.client.initialize()  # the slot map (a no-op once it is there)
        results = await asyncio.gather(*(self._read(key, count) for key in self.keys),
                                       return_exceptions=True)
        # What was read is returned even when other partitions failed (the
        # server delivered it); those failures are in self.errors, and raised
        # when nothing was read.
        self.errors = {key: r for key, r in zip(self.keys, results) if isinstance(r, BaseException)}
        found = [m for r in results if not isinstance(r, BaseException) for m in r]
        if self.errors and not found:
            raise next(iter(self.errors.values()))
        if found or block_ms <= 0:
            return found
        return self._messages(await self._read_raw(self._next_turn(), count, block_ms))

    async def _read(self, key: str, count: int) -> list[Message]:
        return self._messages(await self._read_raw(key, count))

    async def _read_raw(self, key: str, count: int, block_ms: int | None = None) -> Any:
        # Straight to the key's node: client.xreadgroup would first ask the
        # client's default node for XREADGROUP's keys (COMMAND GETKEYS), a
        # round trip more, and no read at all while that node is down.
        args: list[Any] = ["XREADGROUP", "GROUP", self.group, self.name, "COUNT", count]
        if block_ms is not None:
            args += ["BLOCK", block_ms]
        args += ["STREAMS", key, ">"]
        if hasattr(self.client, "get_node_from_key"):
            return await self.client.execute_command(
                *args, target_nodes=self.client.get_node_from_key(key))
        return await self.client.execute_command(*args)

    async def ack(self, messages: Iterable[Message]) -> int:
        """XACK the messages, per partition in one pipeline; how many were pending."""
        ids = self._ack_ids(messages)
        if not ids:
            return 0
        pipe = self.client.pipeline(transaction=False)
        for key, entry_ids in ids.items():
            pipe.xack(key, self.group, *entry_ids)
        return sum(await pipe.execute())

    async def claim(self, min_idle_ms: int, count: int = 100) -> list[Message]:
        """XAUTOCLAIM of up to ``count`` per partition, idle ``min_idle_ms`` or
        more, each partition's cursor going on from the last call."""
        pipe = self.client.pipeline(transaction=False)
        for key in self.keys:
            pipe.xautoclaim(key, self.group, self.name, min_idle_ms,
                            start_id=self._cursors[key], count=count)
        return self._claimed(await pipe.execute())

    async def pending(self) -> int:
        """Messages of these partitions delivered and not acknowledged."""
        pipe = self.client.pipeline(transaction=False)
        for key in self.keys:
            pipe.xpending(key, self.group)
        return sum(reply["pending"] for reply in await pipe.execute())
