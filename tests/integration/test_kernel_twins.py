"""The servers the tests start run the twin of the kernels the tests expect
(src/tidelog/kernels.py): the pure one under TIDELOG_PURE=1, which make
test's second pass sets for the integration and differential suites and
which must reach every tidelog-server they start, as the embedded one; else
the one this install built."""

from __future__ import annotations

from tests.support.redis_oracle import free_port
from tidelog import kernels


def expected() -> str:
    return "pure" if kernels.pure_forced() else kernels.status()


def test_a_started_server_runs_the_expected_twin(processes):
    port = free_port()
    server = processes.tidelog(["--port", str(port), "--save", ""], port=port)
    with server.client() as client:
        assert client.info("server")["tidelog_kernels"] == expected()


def test_the_embedded_server_runs_the_expected_twin(r):
    assert r.info("server")["tidelog_kernels"] == expected()
