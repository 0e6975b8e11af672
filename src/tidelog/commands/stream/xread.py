"""XREAD, and its blocking form.

Like XDEL, and unlike most commands, XREAD looks its keys up before it has
checked every argument, as Redis does (the tests pin the order against
redis-server).  Blocking: XREAD BLOCK resolves every ``$`` and ``+`` to a
concrete ID when it is called, then returns a
:class:`~tidelog.commands.contract.Wait`.  The engine retries it each time
one of its keys is made ready (XADD does that); the retry serves the key
that became ready, and that key only, as Redis does."""

from __future__ import annotations

from typing import Any

from ... import errors
from ...errors import CommandError
from ...ids import MAX_ID, MIN_ID, StreamID
from ...resp.replies import NULL_ARRAY
from ...types.stream import Stream
from ..contract import Ctx, Wait
from ..key_specs import ks
from ..lookup import lookup_read_typed
from ..table import command
from .entries import SizeBudget, capped_count, entries_reply, last_valid_id, streams_reply
from .stream_args import XREAD_BLOCKED_DEFAULT_COUNT, parse_read_options, parse_strict_id_arg


@command("xread", arity=-4, flags="readonly blocking movablekeys", keys=(0, 0, 0),
         group="stream", since="5.0.0",
         complexity="For each stream mentioned: O(M) with M being the number of elements "
                    "returned. If M is constant (e.g. always asking for the first 10 "
                    "elements with COUNT), you can consider it O(1). On the other side "
                    "when XREAD blocks, XADD will pay the O(N) time in order to serve the "
                    "N clients blocked on the stream getting new data.",
         summary="Returns entries from one or more streams with IDs above the ones given, "
                 "optionally blocking until there are some.",
         key_specs=[ks("RO access", "STREAMS", -1, limit=2)])
def xread(ctx: Ctx, argv: list[bytes]) -> Any:
    """XREAD [COUNT count] [MAXCOUNT maxcount] [MAXSIZE maxsize] [BLOCK milliseconds] STREAMS key [key ...] id [id ...]"""  # noqa: E501 (the syntax line, whole)
    opts = parse_read_options(argv, group=False)
    timeout, count, maxcount, keys = opts.timeout, opts.count, opts.maxcount, opts.keys
    # The ID after which each stream is read; keys are checked in order, each
    # key's type before its ID.
    after: list[StreamID] = []
    for key, id_arg in zip(keys, opts.ids):
        stream = lookup_read_typed(ctx, key, Stream)  # and again below: twice, as in Redis
        if id_arg == b"$":
            after.append(stream.last_id if stream is not None else MIN_ID)
        elif id_arg == b"+":
            # Redis 7.4: just the last entry (an empty stream reads like "$").
            if stream is None:
                after.append(MIN_ID)
            elif stream.length:
                after.append(last_valid_id(stream).decr())
            else:
                after.append(stream.last_id)
        elif id_arg == b">":
            raise CommandError(errors.XREAD_GT_ID)
        else:
            after.append(parse_strict_id_arg(id_arg))

    results = []
    budget = maxcount
    size = SizeBudget(opts.maxsize) if opts.maxsize else None
    for key, gt in zip(keys, after):
        if maxcount and budget <= 0:
            break  # MAXCOUNT reached: the keys after it are not served
        stream = lookup_read_typed(ctx, key, Stream)
        if stream is not None and last_valid_id(stream) > gt:
            found = entries_reply(stream, gt.incr(), MAX_ID, capped_count(count, maxcount, budget))
            if size is not None:
                size.open_key(key)
                found = found[:size.fit(found)]
                if not found:
                    break  # MAXSIZE passed: this key and those after it are left out
            results.append((key, found))
            budget -= len(found)
    if results:
        return streams_reply(ctx, results)
    if timeout < 0:
        return NULL_ARRAY

    # Block.  A key named twice waits for the first ID given for it.
    waits: dict[bytes, StreamID] = {}
    for key, gt in zip(keys, after):
        waits.setdefault(key, gt)
    served_count = capped_count(count or XREAD_BLOCKED_DEFAULT_COUNT, maxcount, maxcount)

    def retry(woken: Ctx) -> Any:
        ready = [woken.ready_key] if woken.ready_key is not None else list(waits)
        for key in ready:
            gt = waits.get(key)
            stream = woken.db.get(key)
            # Served as soon as the stream's last ID moved past ours, even if
            # the entries after it are gone again (an empty list, as Redis).
            if gt is not None and type(stream) is Stream and stream.last_id > gt:
                found = entries_reply(stream, gt.incr(), MAX_ID, served_count)
                if opts.maxsize:
                    found = found[:SizeBudget(opts.maxsize).fit(found)]
                return streams_reply(woken, [(key, found)])
        return None

    return Wait(list(waits), timeout, retry, NULL_ARRAY)
