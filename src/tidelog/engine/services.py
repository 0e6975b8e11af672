"""The engine's persistence and replication until the real ones are
attached (:mod:`tidelog.persistence`, :mod:`tidelog.replication`).
"""

from __future__ import annotations

import os
from typing import Any

from ..commands.contract import AOF_OFF_INFO, ClientState
from .base import EngineCore


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

    def replicate_only(self, db_index: int, argv: list[bytes]) -> None:
        pass

    def snapshot_aux(self) -> dict[bytes, bytes]:
        return {}

    def refresh_write_guard(self) -> None:
        pass

    def cron(self) -> None:
        pass
