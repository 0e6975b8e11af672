"""TLS on tls-port beside the plain port: redis-py with ssl=True, redis-cli
--tls, client certificates required / optional / not asked for, the allowed
protocol versions, and a replica's link over TLS (tls-replication)."""

from __future__ import annotations

import socket
import ssl
import subprocess

import pytest
import redis

from tests.support.certs import OPENSSL, make_certs
from tests.support.redis_oracle import free_port
from tests.support.waits import wait_until

pytestmark = pytest.mark.skipif(OPENSSL is None, reason="the openssl command is not installed")


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    return make_certs(tmp_path_factory.mktemp("certs"))


def start(processes, tmp_path, certs, *extra: str):
    port, tls_port = free_port(), free_port()
    data = tmp_path / f"data-{port}"
    data.mkdir()
    srv = processes.tidelog(["--port", str(port), "--dir", str(data), "--save", "",
                             "--tls-port", str(tls_port),
                             "--tls-cert-file", str(certs.server_cert),
                             "--tls-key-file", str(certs.server_key),
                             "--tls-ca-cert-file", str(certs.ca), *extra], port=port)
    return srv, tls_port


def tls_client(port: int, certs, cert=True, **kw) -> redis.Redis:
    extra = {"ssl_certfile": str(certs.client_cert), "ssl_keyfile": str(certs.client_key)} \
        if cert else {}
    return redis.Redis(port=port, ssl=True, ssl_ca_certs=str(certs.ca), socket_timeout=10,
                       decode_responses=True, **extra, **kw)


def test_tls_and_plain_ports_side_by_side(processes, tmp_path, certs) -> None:
    srv, tls_port = start(processes, tmp_path, certs)
    with tls_client(tls_port, certs) as c:
        c.xadd("s", {"f": "v"}, id="1-1")
        assert c.ping() is True
    assert srv.client().xrange("s") == [("1-1", {"f": "v"})]
    out = subprocess.run(["redis-cli", "--tls", "--cacert", str(certs.ca),
                          "--cert", str(certs.client_cert), "--key", str(certs.client_key),
                          "-p", str(tls_port), "XLEN", "s"],
                         capture_output=True, text=True, timeout=30)
    assert out.stdout.strip() == "1", out.stderr


def test_a_client_without_a_good_certificate_is_refused(processes, tmp_path, certs) -> None:
    _, tls_port = start(processes, tmp_path, certs)
    with pytest.raises(redis.ConnectionError):
        tls_client(tls_port, certs, cert=False).ping()
    with pytest.raises(redis.ConnectionError):
        redis.Redis(port=tls_port, ssl=True, ssl_ca_certs=str(certs.ca),
                    ssl_certfile=str(certs.stranger_cert), ssl_keyfile=str(certs.stranger_key),
                    socket_timeout=10).ping()
    with pytest.raises(redis.ConnectionError):  # plain text on the TLS port
        redis.Redis(port=tls_port, socket_timeout=5).ping()


@pytest.mark.parametrize("mode", ["no", "optional"])
def test_tls_auth_clients_no_or_optional(processes, tmp_path, certs, mode) -> None:
    _, tls_port = start(processes, tmp_path, certs, "--tls-auth-clients", mode)
    assert tls_client(tls_port, certs, cert=False).ping() is True
    assert tls_client(tls_port, certs).ping() is True


def test_tls_protocols(processes, tmp_path, certs) -> None:
    _, tls_port = start(processes, tmp_path, certs, "--tls-protocols", "TLSv1.3")
    assert tls_client(tls_port, certs).ping() is True
    ctx = ssl.create_default_context(cafile=str(certs.ca))
    ctx.load_cert_chain(str(certs.client_cert), str(certs.client_key))
    ctx.maximum_version = ssl.TLSVersion.TLSv1_2
    with socket.create_connection(("127.0.0.1", tls_port), timeout=10) as sock:
        with pytest.raises(ssl.SSLError):
            ctx.wrap_socket(sock, server_hostname="127.0.0.1")


def test_a_replica_over_tls(processes, tmp_path, certs) -> None:
    primary, primary_tls = start(processes, tmp_path, certs)
    primary.client().xadd("s", {"n": "1"}, id="1-1")
    # The server's own certificate is for serving (serverAuth): the replica
    # presents a client certificate, as Redis's docs advise.
    replica, _ = start(processes, tmp_path, certs, "--tls-replication", "yes",
                       "--tls-client-cert-file", str(certs.client_cert),
                       "--tls-client-key-file", str(certs.client_key),
                       "--replicaof", "127.0.0.1", str(primary_tls))
    rc = replica.client()
    wait_until(lambda: rc.info("replication")["master_link_status"] == "up", timeout=30)
    c = primary.client()
    c.xadd("s", {"n": "2"}, id="2-1")
    assert c.wait(1, 10_000) == 1
    assert rc.xrange("s") == c.xrange("s")


def test_bad_tls_files_stop_the_start_with_one_line(processes, tmp_path, certs) -> None:
    port = free_port()
    srv = processes.tidelog(["--port", str(port), "--dir", str(tmp_path), "--tls-port",
                             str(free_port()), "--tls-cert-file", str(tmp_path / "nope.crt"),
                             "--tls-key-file", str(certs.server_key), "--tls-ca-cert-file",
                             str(certs.ca)], port=port, ready=False)
    assert srv.wait() != 0
    assert "Failed to load certificate" in srv.stdout + srv.stderr


def test_tls_settings_change_at_run_time(processes, tmp_path, certs) -> None:
    """CONFIG SET tls-auth-clients builds the context again and the TLS
    listener serves under it on the same socket; tls-port moves the TLS
    listener; a certificate that cannot be loaded fails with Redis's text
    and changes nothing."""
    srv, tls_port = start(processes, tmp_path, certs)
    admin = srv.client()
    with pytest.raises(redis.ConnectionError):
        tls_client(tls_port, certs, cert=False).ping()
    assert admin.config_set("tls-auth-clients", "no") is True
    assert tls_client(tls_port, certs, cert=False).ping() is True
    with pytest.raises(redis.ResponseError) as info:
        admin.config_set("tls-cert-file", str(tmp_path / "missing.crt"))
    assert str(info.value) == ("CONFIG SET failed (possibly related to argument "
                               "'tls-cert-file') - Unable to update TLS configuration. "
                               "Check server logs.")
    assert admin.config_get("tls-cert-file")["tls-cert-file"] == str(certs.server_cert)
    assert tls_client(tls_port, certs, cert=False).ping() is True
    moved = free_port()
    assert admin.config_set("tls-port", moved) is True
    assert tls_client(moved, certs, cert=False).ping() is True
    with pytest.raises(redis.ConnectionError):
        tls_client(tls_port, certs, cert=False).ping()
    assert admin.config_set("tls-port", 0) is True
    with pytest.raises(redis.ConnectionError):
        tls_client(moved, certs, cert=False).ping()
