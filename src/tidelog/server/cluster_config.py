"""nodes.conf on disk: locked for the life of the process, rewritten whole.

Redis locks its cluster configuration file with ``flock`` so that two nodes
never share one, and rewrites it when the node's view of the cluster
changes (fsynced when epochs or votes changed: a vote must survive a crash).
Here the new text goes to a temporary file beside the old one, is fsynced
when asked, and is renamed over it; the lock moves to the new file.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Callable
from typing import Any


class ConfigLockError(Exception):
    """nodes.conf is locked by another process (or cannot be opened)."""


def lock_config(path: str) -> int:
    """Open (create) ``path`` and take an exclusive ``flock`` without
    waiting; the descriptor, kept open while the lock is held.  Raises
    ConfigLockError when another process holds it."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise ConfigLockError(f"Can't open {path} in order to acquire a lock: "
                              f"{exc.strerror}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise ConfigLockError(
            f"Sorry, the cluster configuration file {path} is already used by a different "
            "Redis Cluster node. Please make sure that different nodes use different cluster "
            "configuration files.") from None
    return fd


def write_config(path: str, text: str, fsync: bool, lock_fd: int | None,
                 release: Callable[[int], None] = os.close) -> int | None:
    """Write ``text`` as the new ``path``: a temporary file beside it,
    fsynced when ``fsync``, renamed over ``path`` (the directory fsynced
    too); the lock moves to the new file.  Returns the new lock descriptor
    (``lock_fd`` given to ``release``), or ``lock_fd`` when not locked.
    Raises OSError.

    Closing the old descriptor frees the replaced file, which ext4 does
    in the close (about 1.3 ms here, most of a save): the shell releases
    it on a worker thread, off the event loop."""
    directory = os.path.dirname(os.path.abspath(path))
    tmp = os.path.join(directory, f"temp-{os.getpid()}-{os.path.basename(path)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        data = text.encode()
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        if fsync:
            os.fsync(fd)
    finally:
        os.close(fd)
    if lock_fd is None:
        os.replace(tmp, path)
        return None
    new_fd = os.open(tmp, os.O_RDWR)
    fcntl.flock(new_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # nobody else knows the temp file
    os.replace(tmp, path)
    if fsync:
        dir_fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    release(lock_fd)  # (the new file is locked already)
    return new_fd


def config_path(config: Any) -> str:
    """``cluster-config-file``, relative to ``dir`` as Redis has it."""
    return os.path.join(config["dir"], config["cluster-config-file"])
