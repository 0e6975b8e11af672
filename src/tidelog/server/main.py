"""``tidelog-server [config-file] [--option value ...]``: start the server.

Options use redis.conf names (``--port 7000 --dir /var/lib/tidelog``); the
file, then the command line, are applied over the defaults.  A bad line in
the file stops the start with Redis's config error report (file and line); a
bad option on the command line with one line naming it.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
from typing import Any, TextIO

from .. import REDIS_VERSION, __version__, errors
from ..config import Config, ConfigError, ConfigFileError, split_config_args
from ..engine import Engine
from ..persistence.durability import attach, load_at_startup, snapshotter
from ..persistence.rdb import RdbError
from ..replication.primary import follow_configured, stop_following
from . import daemon, local_cluster
from .listeners import ListenError
from .net import Server

log = logging.getLogger("tidelog")

USAGE = """\
Usage: tidelog-server [/path/to/tidelog.conf] [--option value ...]
       tidelog-server --cluster-local N [--port P] [--dir D] [--option value ...]
       tidelog-server -v or --version
       tidelog-server -h or --help

Options are redis.conf directives: in the file, one per line, or on the
command line after two dashes; the command line wins.  Any redis.conf works
(directives Tidelog has no use for are named once in the log).  A "-" first
or last reads more directives from standard input.  Defaults: port 6379 on
127.0.0.1, data in ./data, snapshots at Redis's save points.

Examples:
       tidelog-server                                  (the defaults)
       tidelog-server --port 7000 --dir /var/lib/tidelog
       tidelog-server /etc/tidelog.conf --loglevel verbose
       tidelog-server /etc/redis/redis.conf --daemonize no --supervised systemd
       echo "port 7000" | tidelog-server -
       tidelog-server --appendonly yes --appendfsync everysec

Stop it with Ctrl-C, SIGTERM or `redis-cli shutdown` (each saves a snapshot
when save points are set).  More: README.md, "Running the server".

--cluster-local N starts N nodes on ports P..P+N-1 (data in D/<port>/) as one
Redis Cluster and watches them: `tidelog-server --cluster-local --help`."""


def parse_command_line(argv: list[str], stdin: TextIO | None = None) -> Config:
    """Build the Config from ``[config-file] [-] [--name value ...]``, as
    redis-server reads its command line: the file, then (``-`` first or
    last) the directives on stdin, then the options, each over the last.
    ``--name value`` may also come as one argument (``"--port 7000"``).

    Raises ConfigError (its text is what to print) and OSError (a file)."""
    config = Config()
    args = list(argv)
    path = None
    if args and not args[0].startswith("-"):
        path = args.pop(0)
    from_stdin = False
    if args and args[0] == "-":
        from_stdin = True
        args.pop(0)
    elif args and args[-1] == "-":
        from_stdin = True
        args.pop()
    text = ""
    if path is not None:
        with open(path, encoding="utf-8", errors="surrogateescape") as fh:
            text = fh.read()
        config.config_file = os.path.abspath(path)
    if from_stdin:
        text += (stdin or sys.stdin).read()
    if text:
        config.load_text(text)
    directives: list[list[str]] = []
    for arg in args:
        if arg.startswith("--"):
            words = split_config_args(arg[2:]) if arg[2:].strip() else [arg[2:]]
            if not words:
                raise ConfigError(errors.command_line_bad_option(
                    arg, errors.CONFIG_UNBALANCED_QUOTES))
            directives.append(words)
        elif directives:
            directives[-1].append(arg)
        else:
            raise ConfigError(errors.command_line_unexpected(arg))
    for name, *values in directives:
        if name.lower() == "save" and not values:  # `--save` alone: no save points (Redis 7.0.1+)
            values = [""]
        try:
            if name.lower() == "include" and len(values) == 1:
                config.load_file(values[0])
                continue
            config.apply_directive(name.lower(), values)
        except ConfigFileError:
            raise
        except ConfigError as exc:
            given = " ".join(["--" + name, *values])
            raise ConfigError(errors.command_line_bad_option(given, str(exc))) from None
    return config


def check_logfile(config: Config) -> None:
    """As Redis after reading its config: the log file must open for appending."""
    logfile = daemon.log_path(config)
    if not logfile:
        return
    try:
        if logfile != config["logfile"]:  # inside dir, which the server makes if need be
            os.makedirs(config["dir"], exist_ok=True)
        with open(logfile, "a", encoding="utf-8"):
            pass
    except OSError as exc:
        raise ConfigError(errors.config_fatal(
            REDIS_VERSION, f"Can't open the log file: {exc.strerror}")) from None


def setup_logging(config: Config) -> None:
    daemon.setup_logging(config)


def start_aof(engine: Engine, server: Server) -> Any:
    """``appendonly yes``: replay the AOF directory, then append to it.

    Replies wait for the AOF (``server.write_gate``) as ``appendfsync``
    says; the engine's persistence keeps it (``Durability.aof``) for
    BGREWRITEAOF, INFO persistence and DEBUG LOADAOF.  Raises AofLoadError."""
    from ..persistence import aof, aof_loader, aof_manifest

    log.info("Reading the append only file from %s", aof_manifest.aof_dir(engine.config))
    aof_loader.load(engine)
    writer = aof.Aof(engine)
    writer.open()
    attach(engine).aof = writer
    server.write_gate = writer
    writer.attach(asyncio.get_running_loop())
    return writer


def load_rdb(engine: Engine) -> dict[bytes, bytes] | None:
    """``appendonly no``: load ``<dir>/<dbfilename>`` if there is one (its AUX
    fields, or None); exit on a bad file, as Redis does."""
    try:
        info = load_at_startup(engine)
        return None if info is None else info.aux
    except (RdbError, OSError) as exc:
        log.warning("Fatal error loading the DB: %s. Exiting.", exc)
        raise SystemExit(1) from None


async def serve(config: Config, supervisor: str | None = None) -> None:
    try:
        engine = Engine(config)
    except ValueError as exc:  # rename-command of a command that does not exist
        log.warning("Fatal config error: %s", exc)
        raise SystemExit(1) from None
    daemon.set_role(lambda: "S" if engine.replication.is_replica else "M")
    server = Server(engine)
    await server.start()   # first: a busy port stops the start before anything is on disk
    os.makedirs(config["dir"], exist_ok=True)
    cluster = None
    if config["cluster-enabled"]:  # before the data: the per-slot index sees every key
        from . import cluster_bus
        try:
            cluster = cluster_bus.prepare(engine, config)
        except cluster_bus.ClusterStartError as exc:
            log.warning("%s", exc)
            raise SystemExit(1) from None
    aux = None
    if config["appendonly"]:
        from ..persistence.aof_format import AofLoadError
        try:
            start_aof(engine, server)
        except AofLoadError as exc:
            log.warning("%s", exc)
            raise SystemExit(1) from None
    else:
        aux = load_rdb(engine)
    follow_configured(engine, aux)  # `replicaof host port`: start the link
    if cluster is not None:
        await cluster.start(config["bind"].split(), cluster_bus.bus_port(config),
                            config["tcp-backlog"])
    loop = asyncio.get_running_loop()
    snapshots = snapshotter(engine)
    snapshots.start_cron(loop, autosave=True)  # save points, BGSAVE children
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, server.request_stop)
    pidfile = config["pidfile"]
    if pidfile and not daemon.write_pidfile(pidfile):
        pidfile = ""
    where = ", ".join(f"{h.lstrip('-')}:{config['port']}"
                      for h in config["bind"].split()) if config["port"] else ""
    log.info("Tidelog %s (Redis %s protocol) pid=%d, listening on %s%s%s", __version__,
             REDIS_VERSION, os.getpid(), where,
             f", TLS on port {config['tls-port']}" if config["tls-port"] else "",
             f" and {config['unixsocket']}" if config["unixsocket"] else "")
    log.info("Ready to accept connections")
    daemon.tell_ready(supervisor, engine.replication.is_replica)
    await server.serve_until_stopped()
    if cluster is not None:
        await cluster.stop()
    await stop_following(engine)  # a replica: nothing reconnects once we stop listening
    daemon.tell_stopping(supervisor)
    if not snapshots.shutdown_handled:  # SIGTERM/SIGINT: save as SHUTDOWN would
        if not snapshots.shutdown_save(None):
            log.warning("Error trying to save the DB before exiting")
    durability = attach(engine)
    if durability.aof is not None:  # CONFIG SET appendonly may have changed it
        log.info("Calling fsync() on the AOF file.")
    durability.close()  # also stops a rewrite of appendonly no
    log.info("Tidelog is now ready to exit, bye bye...")
    if pidfile:
        daemon.remove_pidfile(pidfile)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in ("-v", "--version"):
        print(f"Tidelog server v={__version__} redis_version={REDIS_VERSION}")
        return 0
    if argv and argv[0] in ("-h", "--help"):
        print(USAGE)
        return 0
    if local_cluster.wants_launcher(argv):  # N nodes, not this process, serve
        return local_cluster.main(argv)
    try:
        config = parse_command_line(argv)
    except ConfigError as exc:
        print(str(exc), file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"Fatal error, can't open config file '{exc.filename}': {exc.strerror}", file=sys.stderr)
        return 1
    try:
        check_logfile(config)
    except ConfigError as exc:
        print(str(exc), file=sys.stderr)
        return 1
    supervisor = config.supervised_by = daemon.supervisor(config)
    if config["daemonize"] and supervisor is None:  # a supervisor keeps us in the foreground
        daemon.daemonize()
        if not config["pidfile"]:
            config.set("pidfile", daemon.DEFAULT_PIDFILE, at_startup=True)
    setup_logging(config)
    warning = daemon.supervision_warning(config)
    if warning:
        log.warning("%s", warning)
    if supervisor is not None:
        log.info("Supervised by %s, will signal readiness", supervisor)
    if config.no_effect_read:
        log.info("Accepted, no effect in Tidelog: %s", ", ".join(config.no_effect_read))
    try:
        import uvloop
        uvloop.run(serve(config, supervisor))
    except ListenError as exc:
        log.error("%s", exc)
        return 1
    except OSError as exc:
        log.error("Could not start: %s", exc)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
