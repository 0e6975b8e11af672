"""Handing Tidelog's snapshot to redis-server: the integration tests of
every type check that redis-check-rdb accepts it and redis-server loads it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

REDIS_CHECK_RDB = shutil.which("redis-check-rdb")


def redis_on_our_dump(tidelog_srv, processes, tmp_path: Path):
    """Move the ``dump.rdb`` the embedded Tidelog just saved into ``tmp_path``,
    check it with redis-check-rdb (when installed), and start redis-server on
    it; the returned process is stopped by the ``processes`` fixture."""
    target = tmp_path / "from-tidelog.rdb"
    shutil.move(Path(tidelog_srv.engine.config["dir"]) / "dump.rdb", target)
    if REDIS_CHECK_RDB:
        check = subprocess.run([REDIS_CHECK_RDB, str(target)], capture_output=True, text=True,
                               timeout=60)
        assert check.returncode == 0 and "RDB looks OK" in check.stdout, check.stdout
    return processes.redis("--dir", str(tmp_path), "--dbfilename", target.name)
