"""The process as an operator runs it, the way Redis runs: its log lines, the
log file or stdout, syslog, ``daemonize``, the pidfile and ``supervised``.

Log lines read as Redis's::

    4242:M 28 Nov 2026 12:00:00.123 * Ready to accept connections

the pid, the role (``M`` a primary, ``S`` a replica, ``C`` a forked child
such as a snapshot writer, ``X`` a sentinel), local time to the millisecond,
then a character for the level (``.`` debug, ``-`` verbose, ``*`` notice,
``#`` warning).  ``loglevel`` picks the lowest level written; the file is
reopened when it is moved (log rotation).  With ``syslog-enabled yes`` every
line also goes to syslog (ident and facility from the config), without the
prefix, as Redis sends it.

``daemonize yes`` detaches as Redis does: one fork (the parent exits 0),
``setsid``, and stdin, stdout and stderr on /dev/null; the pidfile (by
default /var/run/tidelog.pid when detached) is written once the server
listens and removed at exit.  Under a supervisor (``supervised systemd``, or
``auto`` finding $NOTIFY_SOCKET or $UPSTART_JOB) the process stays in the
foreground and tells the supervisor when it is ready and when it stops.
"""

from __future__ import annotations

import logging
import logging.handlers
import os
import socket
import sys
import time
from collections.abc import Callable

from ..config import LOG_LEVELS, LOG_VERBOSE, Config

log = logging.getLogger("tidelog")

DEFAULT_PIDFILE = "/var/run/tidelog.pid"

# The role letter of the log lines, asked per line (a replica can be promoted).
_role: Callable[[], str] = lambda: "M"  # noqa: E731
_main_pid = os.getpid()


def set_role(role: Callable[[], str]) -> None:
    """``role()`` -> "M" or "S" from now on (the engine knows)."""
    global _role
    _role = role


def level_char(levelno: int) -> str:
    if levelno <= logging.DEBUG:
        return "."
    if levelno <= LOG_VERBOSE:
        return "-"
    if levelno <= logging.INFO:
        return "*"
    return "#"


class RedisFormatter(logging.Formatter):
    """``pid:role dd Mon yyyy hh:mm:ss.mmm <level> message``."""

    def format(self, record: logging.LogRecord) -> str:
        pid = os.getpid()
        role = "C" if pid != _main_pid else _role()
        when = time.strftime("%d %b %Y %H:%M:%S", time.localtime(record.created))
        line = (f"{pid}:{role} {when}.{int(record.msecs):03d} {level_char(record.levelno)} "
                f"{record.getMessage()}")
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


class SyslogHandler(logging.Handler):
    """Each record to syslog at Redis's priority for its level."""

    def __init__(self, ident: str, facility: str) -> None:
        import syslog  # POSIX only; imported when asked for
        super().__init__()
        self._syslog = syslog
        syslog.openlog(ident, syslog.LOG_PID | syslog.LOG_NDELAY | syslog.LOG_NOWAIT,
                       getattr(syslog, "LOG_" + facility.upper()))

    def emit(self, record: logging.LogRecord) -> None:
        s = self._syslog
        if record.levelno <= logging.DEBUG:
            priority = s.LOG_DEBUG
        elif record.levelno <= LOG_VERBOSE:
            priority = s.LOG_INFO
        elif record.levelno <= logging.INFO:
            priority = s.LOG_NOTICE
        else:
            priority = s.LOG_WARNING
        try:
            s.syslog(priority, record.getMessage())
        except Exception:  # never let logging stop the server
            self.handleError(record)


def log_path(config: Config) -> str:
    """``logfile``, a relative one inside ``dir``: Redis changes to ``dir``
    before it writes a line, so that is where its log goes."""
    logfile = str(config["logfile"])
    return logfile if not logfile or os.path.isabs(logfile) else os.path.join(config["dir"],
                                                                                 logfile)


def setup_logging(config: Config) -> None:
    """Log lines to ``logfile`` (stdout when ""), and to syslog when enabled."""
    global _main_pid
    _main_pid = os.getpid()  # after daemonize: the server's pid
    logfile = log_path(config)
    handler: logging.Handler
    if logfile:
        handler = logging.handlers.WatchedFileHandler(logfile, encoding="utf-8",
                                                      errors="backslashreplace")
    else:
        handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(RedisFormatter())
    handlers = [handler]
    if config["syslog-enabled"]:
        handlers.append(SyslogHandler(config["syslog-ident"], config["syslog-facility"]))
    root = logging.getLogger("tidelog")
    root.handlers[:] = handlers
    root.setLevel(LOG_LEVELS[config["loglevel"]])
    logging.addLevelName(LOG_VERBOSE, "VERBOSE")


# -- supervision -------------------------------------------------------------------------
def supervisor(config: Config) -> str | None:
    """"systemd" or "upstart" when one supervises this process, else None."""
    mode = config["supervised"]
    if mode in ("auto", "upstart") and os.environ.get("UPSTART_JOB"):
        return "upstart"
    if mode in ("auto", "systemd") and os.environ.get("NOTIFY_SOCKET"):
        return "systemd"
    return None


def supervision_warning(config: Config) -> str | None:
    """Redis's warning when ``supervised`` names a supervisor not found."""
    mode = config["supervised"]
    if mode == "upstart" and not os.environ.get("UPSTART_JOB"):
        return "upstart supervision requested, but UPSTART_JOB not found!"
    if mode == "systemd" and not os.environ.get("NOTIFY_SOCKET"):
        return "systemd supervision requested or auto-detected, but NOTIFY_SOCKET not found!"
    return None


def notify_systemd(message: str) -> None:
    """One datagram to $NOTIFY_SOCKET (``@name``: the abstract namespace)."""
    path = os.environ.get("NOTIFY_SOCKET", "")
    if not path:
        return
    address = "\0" + path[1:] if path.startswith("@") else path
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
            sock.sendto(message.encode(), address)
    except OSError as exc:
        log.warning("Can't send notification to systemd: %s", exc)


def tell_ready(kind: str | None, replica: bool) -> None:
    """The server accepts connections: tell the supervisor, as Redis does."""
    if kind == "systemd":
        status = ("Ready to accept connections in read-only mode. Waiting for MASTER <-> "
                  "REPLICA sync" if replica else "Ready to accept connections")
        notify_systemd(f"STATUS={status}\n")
        notify_systemd("READY=1\n")
    elif kind == "upstart":  # upstart's "expect stop": stop, and be continued
        import signal
        os.kill(os.getpid(), signal.SIGSTOP)
        os.environ.pop("UPSTART_JOB", None)


def tell_stopping(kind: str | None) -> None:
    if kind == "systemd":
        notify_systemd("STOPPING=1\n")


# -- daemonize and the pidfile ------------------------------------------------------------
def daemonize() -> None:
    """Detach as Redis does: fork (the parent exits at once, status 0), a
    new session, stdin/stdout/stderr on /dev/null."""
    sys.stdout.flush()
    sys.stderr.flush()
    if os.fork():
        os._exit(0)
    os.setsid()
    fd = os.open(os.devnull, os.O_RDWR)
    for std in (0, 1, 2):
        os.dup2(fd, std)
    if fd > 2:
        os.close(fd)


def write_pidfile(path: str) -> bool:
    """This process's pid and a newline; a failure is logged, not fatal."""
    try:
        with open(path, "w", encoding="ascii") as fh:
            fh.write(f"{os.getpid()}\n")
        return True
    except OSError as exc:
        log.warning("Failed to write PID file: %s", exc.strerror or exc)
        return False


def remove_pidfile(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
