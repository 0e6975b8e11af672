"""Certificates for the TLS tests, made with the ``openssl`` command: a CA,
a server certificate for 127.0.0.1 and a client certificate, both signed by
the CA, and a client certificate signed by another CA (which must be refused)."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

OPENSSL = shutil.which("openssl")


@dataclass(frozen=True)
class Certs:
    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path
    stranger_cert: Path  # signed by another CA
    stranger_key: Path


def _run(*argv: str, cwd: Path) -> None:
    subprocess.run([OPENSSL, *argv], cwd=cwd, check=True, capture_output=True, timeout=60)


def _ca(d: Path, name: str) -> None:
    _run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
         f"/CN={name}", "-keyout", f"{name}.key", "-out", f"{name}.crt", cwd=d)


def _signed(d: Path, name: str, ca: str, ext: str) -> None:
    (d / f"{name}.ext").write_text(ext)
    _run("req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={name}",
         "-keyout", f"{name}.key", "-out", f"{name}.csr", cwd=d)
    _run("x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.crt", "-CAkey", f"{ca}.key",
         "-CAcreateserial", "-days", "2", "-out", f"{name}.crt", "-extfile", f"{name}.ext",
         cwd=d)


def make_certs(d: Path) -> Certs:
    d.mkdir(parents=True, exist_ok=True)
    _ca(d, "ca")
    _ca(d, "otherca")
    _signed(d, "server", "ca", "subjectAltName=IP:127.0.0.1,DNS:localhost\n"
            "extendedKeyUsage=serverAuth\n")
    _signed(d, "client", "ca", "extendedKeyUsage=clientAuth\n")
    _signed(d, "stranger", "otherca", "extendedKeyUsage=clientAuth\n")
    return Certs(d / "ca.crt", d / "server.crt", d / "server.key", d / "client.crt",
                 d / "client.key", d / "stranger.crt", d / "stranger.key")
