"""Run a Tidelog server inside another Python program, on its own thread.

    with EmbeddedServer(port=0) as srv:       # port 0: any free port
        redis.Redis(port=srv.port).xadd("s", {"f": "v"})

As tidelog-server does at start, ``appendonly=yes`` replays the AOF in
``dir`` and appends to it; with ``appendonly no`` and a ``dir`` other than
the default, ``<dir>/<dbfilename>`` is loaded if it exists.  Without those
options nothing is read from or written to the working directory at start.

The engine is reachable as ``srv.engine`` (for tests: effects, stats), but
it belongs to the server's thread: touch it only through ``srv.call(fn)``,
which runs ``fn`` on that thread and returns its result.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Callable
from typing import Any

from ..clock import Clock
from ..config import OPTIONS, Config
from ..engine import Engine
from ..persistence.durability import attach, load_at_startup
from ..replication.primary import follow_configured, stop_following
from .main import start_aof
from .net import Server


class EmbeddedServer:
    def __init__(self, config: Config | None = None, clock: Clock | None = None,
                 **options: Any) -> None:
        self.config = config or Config()
        if "port" not in options and config is None:
            options["port"] = 0
        for name, value in options.items():
            self.config.set(name.replace("_", "-"), str(value), at_startup=True)
        self.engine = Engine(self.config, clock)
        self.server = Server(self.engine, any_free_port=True)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None

    @property
    def port(self) -> int:
        return self.server.port

    def start(self) -> EmbeddedServer:
        self._thread = threading.Thread(target=self._run, name="tidelog-server", daemon=True)
        self._thread.start()
        self._ready.wait(30)
        if self._error is not None:
            raise self._error
        return self

    def _run(self) -> None:
        import uvloop
        loop = uvloop.new_event_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(self._start())
        except BaseException as exc:  # report start-up failures to start()
            self._error = exc
            self._ready.set()
            return
        self._ready.set()
        loop.run_until_complete(self.server.serve_until_stopped())
        loop.run_until_complete(stop_following(self.engine))
        attach(self.engine).close()  # the AOF: appendonly, or CONFIG SET appendonly yes
        loop.close()

    async def _start(self) -> None:
        """Load the dataset as tidelog-server does (AofLoadError, RdbError,
        OSError go to start()), then listen."""
        attach(self.engine)
        info = None
        if self.config["appendonly"]:
            start_aof(self.engine, self.server)
        elif self.config["dir"] != OPTIONS["dir"].parse(OPTIONS["dir"].default):
            info = load_at_startup(self.engine)
        await self.server.start()
        follow_configured(self.engine, None if info is None else info.aux)

    def call(self, fn: Callable[[], Any]) -> Any:
        """Run fn on the server's thread and return its result."""
        assert self._loop is not None
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()

        def run() -> None:
            try:
                future.set_result(fn())
            except BaseException as exc:
                future.set_exception(exc)

        self._loop.call_soon_threadsafe(run)
        return future.result(30)

    def stop(self) -> None:
        if self._loop is not None and self._thread is not None and self._thread.is_alive():
            self._loop.call_soon_threadsafe(self.server.request_stop)
            self._thread.join(30)

    def __enter__(self) -> EmbeddedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
