"""The mover: a chunked MIGRATE's talk with its target, as an asyncio task.

The handler (:mod:`tidelog.commands.keys.migrate_chunked`) parks its client
and hands the move here (``Engine.mover``).  One task per move, on a
non-blocking connection of its own to the target (TLS with ``tls-cluster
yes``, the ``tls-*`` client settings, as MIGRATE's cached connection; AUTH
and SELECT are the move's first requests).  It writes each request of the
move's sans-IO dialogue (``move.requests()``) and awaits its reply line,
each round trip bounded by MIGRATE's timeout; awaiting it is where the loop
serves everybody else (the cluster bus, other clients), one chunk between
two turns.  Any failure (connect, write, read, timeout) ends the dialogue:
``TIDELOG.STAGE ABORT`` goes out when the connection still works, the
connection closes, and the move finishes with Redis's IOERR text.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from .. import errors, tls
from ..commands.keys.migrate_sockets import _atoi

log = logging.getLogger("tidelog")


class Mover:
    """The engine's mover in a running server: starts one task per move
    and keeps them until they end (tests and shutdown read ``tasks``)."""

    available = True

    def __init__(self, config: Any) -> None:
        self.config = config
        self.tasks: set[asyncio.Task[None]] = set()

    def start(self, move: Any) -> None:
        task = asyncio.get_running_loop().create_task(self._run(move))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _run(self, move: Any) -> None:
        try:
            await self._move(move)
        except Exception:  # a bug: the client is answered all the same
            log.exception("chunked MIGRATE failed")
            move.finish(errors.MIGRATE_IOERR_WRITE)

    async def _move(self, move: Any) -> None:
        timeout = move.timeout_s
        ssl = None
        if move.tls:
            try:
                ssl = tls.client_context(self.config)
            except tls.TlsError:
                move.finish(errors.MIGRATE_IOERR_CONNECT)
                return
        port = _atoi(move.port) & 0xFFFF  # as MIGRATE's cached connection reads it
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(move.host, port, ssl=ssl,
                                        server_hostname="" if ssl is not None else None),
                timeout)
        except (TimeoutError, OSError, ValueError):
            move.finish(errors.MIGRATE_IOERR_CONNECT)
            return
        failure: bytes | None = None
        usable = True  # the connection may still carry an ABORT
        dialogue = move.requests()
        try:
            request = next(dialogue)
            while True:
                try:
                    writer.write(request)
                    await asyncio.wait_for(writer.drain(), timeout)
                except TimeoutError:
                    failure = errors.MIGRATE_IOERR_WRITE
                    usable = False  # (the write is half done)
                    break
                except OSError:
                    failure, usable = errors.MIGRATE_IOERR_WRITE, False
                    break
                try:
                    line = await asyncio.wait_for(reader.readuntil(b"\r\n"), timeout)
                except TimeoutError:
                    failure = errors.MIGRATE_IOERR_READ
                    break
                except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
                    failure, usable = errors.MIGRATE_IOERR_READ, False
                    break
                request = dialogue.send(line[:-2])
        except StopIteration:
            pass
        finally:
            dialogue.close()
        if failure is not None and usable:
            abort = move.abort_request()
            if abort is not None:
                try:
                    writer.write(abort)
                    await asyncio.wait_for(writer.drain(), timeout)
                    await asyncio.wait_for(reader.readuntil(b"\r\n"), timeout)
                except (TimeoutError, OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
                    pass
        writer.close()
        move.finish(failure)

