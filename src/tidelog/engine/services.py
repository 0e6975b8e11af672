"""The engine's persistence, replication and cluster until the real ones
are attached (:mod:`tidelog.persistence`, :mod:`tidelog.replication`,
:mod:`tidelog.cluster`), and what cluster mode attaches for the slot check
(:class:`SlotRouter`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any, NoReturn

from .. import errors
from ..commands.contract import AOF_OFF_INFO, ClientState, Ctx
from ..errors import CommandError
from .base import EngineCore
from .slot_router import SlotRouter as SlotRouter  # cluster mode's, beside the others


class NoPersistence:
    """The engine's persistence until a durability layer is attached: saves
    nothing, and INFO shows what a server that never saved shows."""

    def __init__(self, engine: EngineCore) -> None:
        self.engine = engine

    def info_lines(self) -> list[str]:
        return [
            f"rdb_changes_since_last_save:{self.engine.dirty}",
            "rdb_bgsave_in_progress:0",
            f"rdb_last_save_time:{self.engine.started_ms // 1000}",
            "rdb_last_bgsave_status:ok",
            "rdb_last_bgsave_time_sec:-1",
            "rdb_current_bgsave_time_sec:-1",
            "rdb_saves:0",
            f"rdb_last_load_keys_expired:{self.engine.rdb_last_load[1]}",
            f"rdb_last_load_keys_loaded:{self.engine.rdb_last_load[0]}",
            *AOF_OFF_INFO,
        ]

    def set_appendonly(self, on: bool) -> None:
        """Nothing to start: the option is only recorded."""

    def shutdown_save(self, save: bool | None) -> bool:
        return True

    # The persistence commands: a bare engine (embedded, a unit test) has
    # nothing to write to until a durability layer is attached.
    def save(self) -> None:
        raise CommandError(errors.NO_PERSISTENCE)

    def bgsave(self, schedule: bool, in_exec: bool) -> Any:
        raise CommandError(errors.NO_PERSISTENCE)

    def last_save(self) -> int:
        return self.engine.started_ms // 1000

    def rewrite_aof(self) -> Any:
        raise CommandError(errors.NO_PERSISTENCE)

    def reload(self, save: bool, flush: bool, merge: bool) -> None:
        raise CommandError(errors.NO_PERSISTENCE)

    def load_aof(self) -> None:
        raise CommandError(errors.NO_PERSISTENCE)


class NoReplication:
    """The engine's replication until a primary is attached
    (:mod:`tidelog.replication`): no replica ever connected."""

    offset = 0
    is_replica = False

    def __init__(self, engine: EngineCore) -> None:
        self.engine = engine
        self.replid = os.urandom(20).hex()

    def change_replid(self) -> None:
        self.replid = os.urandom(20).hex()

    def acks_changed(self) -> None:
        pass

    def aof_switched(self, on: bool) -> None:
        pass

    def info_lines(self) -> list[str]:
        return [
            "role:master",
            "connected_slaves:0",
            "master_failover_state:no-failover",
            f"master_replid:{self.replid}",
            "master_replid2:0000000000000000000000000000000000000000",
            "master_repl_offset:0",
            "second_repl_offset:-1",
            "repl_backlog_active:0",
            f"repl_backlog_size:{self.engine.config['repl-backlog-size']}",
            "repl_backlog_first_byte_offset:0",
            "repl_backlog_histlen:0",
        ]

    def role(self) -> list[Any]:
        return [b"master", 0, []]

    def client_closed(self, client: ClientState) -> None:
        pass

    def resize_backlog(self, size: int) -> None:
        pass

    def replicas_fed(self) -> int:
        return 0

    def replicas_lacking(self, capa: bytes) -> int:
        return 0

    def replicate_only(self, db_index: int, argv: list[bytes]) -> None:
        pass

    def snapshot_aux(self) -> dict[bytes, bytes]:
        return {}

    def refresh_write_guard(self) -> None:
        pass

    def cron(self) -> None:
        pass

    # The replication commands: a bare engine (embedded, a unit test) has no
    # replication layer until one is attached.  What a server that never had
    # a replica answers, it answers; what needs the layer is refused.
    failover_running = False

    def replica_info(self, client: ClientState, *, listening_port: int | None = None,
                     ip: str | None = None, capa: bytes | None = None) -> None:
        raise CommandError(errors.NO_REPLICATION)

    def acked(self, client: ClientState, offset: int, aof_offset: int | None = None) -> None:
        pass  # not a replica: nothing to count

    def serve_sync(self, client: ClientState, replid: bytes, offset: bytes, *,
                   failover: bool = False, legacy_sync: bool = False) -> Any:
        raise CommandError(errors.NO_REPLICATION)

    def wait(self, woff: int, wanted: int, timeout_ms: int, may_block: bool) -> Any:
        raise CommandError(errors.NO_REPLICATION)

    def wait_aof(self, woff: int, numlocal: int, numreplicas: int, timeout_ms: int,
                 may_block: bool) -> Any:
        raise CommandError(errors.NO_REPLICATION)

    def replicaof(self, host: str | None, port: int, by: str) -> Any:
        raise CommandError(errors.NO_REPLICATION)

    def failover_command(self, host: str | None, port: int, timeout_ms: int,
                         force: bool) -> None:
        raise CommandError(errors.FAILOVER_NO_REPLICAS)

    def failover_abort(self) -> None:
        raise CommandError(errors.FAILOVER_NONE)



def _cluster_disabled() -> NoReturn:
    raise CommandError(errors.CLUSTER_DISABLED)


class NoCluster:
    """The engine's cluster outside cluster mode: every CLUSTER subcommand
    answers "This instance has cluster support disabled" (its handler calls
    :meth:`require` before reading its arguments, as Redis checks first;
    the other methods refuse the same way)."""

    def require(self) -> None:
        _cluster_disabled()

    def add_slots(self, ctx: Ctx, ranges: Iterable[tuple[int, int]], delete: bool) -> None:
        _cluster_disabled()

    def flush_slots(self, ctx: Ctx) -> None:
        _cluster_disabled()

    def check_setslot(self) -> None:
        _cluster_disabled()

    def set_slot(self, ctx: Ctx, slot: int, action: bytes, node_id: bytes | None) -> None:
        _cluster_disabled()

    def meet(self, ctx: Ctx, ip: bytes, port: int, cport: int, port_arg: bytes) -> None:
        _cluster_disabled()

    def forget(self, ctx: Ctx, node_id: bytes) -> None:
        _cluster_disabled()

    def replicate(self, ctx: Ctx, node_id: bytes) -> None:
        _cluster_disabled()

    def replicas(self, ctx: Ctx, node_id: bytes) -> list[bytes]:
        _cluster_disabled()

    def count_failure_reports(self, ctx: Ctx, node_id: bytes) -> int:
        _cluster_disabled()

    def failover(self, ctx: Ctx, mode: str) -> None:
        _cluster_disabled()

    def set_config_epoch(self, ctx: Ctx, epoch: int) -> None:
        _cluster_disabled()

    def reset(self, ctx: Ctx, hard: bool) -> None:
        _cluster_disabled()

    def bump_epoch(self, ctx: Ctx) -> bytes:
        _cluster_disabled()

    def save_config(self, ctx: Ctx) -> None:
        _cluster_disabled()

    def info(self, ctx: Ctx) -> bytes:
        _cluster_disabled()

    def nodes(self, ctx: Ctx) -> bytes:
        _cluster_disabled()

    def slots(self, ctx: Ctx) -> list[Any]:
        _cluster_disabled()

    def shards(self, ctx: Ctx) -> list[Any]:
        _cluster_disabled()

    def links(self, ctx: Ctx) -> list[Any]:
        _cluster_disabled()

    def myid(self) -> bytes:
        _cluster_disabled()

    def myshardid(self) -> bytes:
        _cluster_disabled()

    def count_keys_in_slot(self, ctx: Ctx, slot: int) -> int:
        _cluster_disabled()

    def keys_in_slot(self, ctx: Ctx, slot: int, count: int) -> list[bytes]:
        _cluster_disabled()

    def shard_slots(self) -> list[int]:
        _cluster_disabled()

    def propagate_publish(self, channel: bytes, message: bytes, shard: bool) -> bool:
        return False
