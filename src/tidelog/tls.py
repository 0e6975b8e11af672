"""TLS with Python's ``ssl``, as Redis configures it (``tls-*`` options).

The server's context (:func:`server_context`) takes ``tls-cert-file`` /
``tls-key-file`` (``tls-key-file-pass``), the CAs that sign client
certificates (``tls-ca-cert-file``, ``tls-ca-cert-dir``) and whether clients
must present one (``tls-auth-clients yes|no|optional``), the protocol
versions allowed (``tls-protocols "TLSv1.2 TLSv1.3"``, Redis's default when
empty) and the TLS 1.2 ciphers (``tls-ciphers``, ``tls-prefer-server-ciphers``).
A replica with ``tls-replication yes`` connects to its primary with
:func:`client_context`: ``tls-client-cert-file``/``-key-file`` when set,
else the server's own pair, and the same CAs to check the primary.
With ``tls-cluster yes`` the cluster bus uses the same two: the server's
context for the links peers open (:func:`bus_server_context`: a peer must
always present a certificate the CAs sign, whatever ``tls-auth-clients``
says, as Redis's bus asks), the client's for the links this node opens.

Contexts are built once at start-up; errors in the files stop the start with
one line (:class:`TlsError`).
"""

from __future__ import annotations

import ssl
from typing import Any

_VERSIONS = {"tlsv1": ssl.TLSVersion.TLSv1, "tlsv1.1": ssl.TLSVersion.TLSv1_1,
             "tlsv1.2": ssl.TLSVersion.TLSv1_2, "tlsv1.3": ssl.TLSVersion.TLSv1_3}


class TlsError(Exception):
    """The TLS configuration cannot be used; the text says which file or option."""


def _protocols(ctx: ssl.SSLContext, text: str) -> None:
    versions = sorted(_VERSIONS[w.lower()] for w in (text or "TLSv1.2 TLSv1.3").split())
    ctx.minimum_version, ctx.maximum_version = versions[0], versions[-1]


def _load(ctx: ssl.SSLContext, cert: str, key: str, password: str) -> None:
    try:
        ctx.load_cert_chain(cert, key or None, password or None)
    except (OSError, ssl.SSLError) as exc:
        raise TlsError(f"Failed to load certificate: {cert} (key {key or cert}): {exc}") from None


def _cas(ctx: ssl.SSLContext, config: Any) -> bool:
    cafile, capath = config["tls-ca-cert-file"], config["tls-ca-cert-dir"]
    if not cafile and not capath:
        return False
    try:
        ctx.load_verify_locations(cafile or None, capath or None)
    except (OSError, ssl.SSLError) as exc:
        raise TlsError(f"Failed to configure CA certificate(s) file/directory: {exc}") from None
    return True


def _listener_context(config: Any, verify_mode: ssl.VerifyMode,
                      require_cas: bool) -> ssl.SSLContext:
    """A listener's context from the tls-* options: the certificate, the
    protocols, the CAs (``require_cas``: some must be given), the ciphers,
    peers verified as ``verify_mode`` says.  Raises TlsError."""
    cert = config["tls-cert-file"]
    if not cert:
        raise TlsError("No tls-cert-file configured!")
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    _protocols(ctx, config["tls-protocols"])
    _load(ctx, cert, config["tls-key-file"], config["tls-key-file-pass"])
    has_cas = _cas(ctx, config)
    if require_cas and not has_cas:
        raise TlsError("Either tls-ca-cert-file or tls-ca-cert-dir must be specified when "
                       "tls-auth-clients is enabled!")
    ctx.verify_mode = verify_mode
    if config["tls-ciphers"]:
        try:
            ctx.set_ciphers(config["tls-ciphers"])
        except ssl.SSLError as exc:
            raise TlsError(f"Failed to configure ciphers: {exc}") from None
    if config["tls-prefer-server-ciphers"]:
        ctx.options |= ssl.OP_CIPHER_SERVER_PREFERENCE
    return ctx


def server_context(config: Any) -> ssl.SSLContext:
    """The context of ``tls-port`` (``tls-auth-clients`` says how clients
    are verified).  Raises TlsError."""
    auth = config["tls-auth-clients"]
    return _listener_context(config, {"yes": ssl.CERT_REQUIRED, "optional": ssl.CERT_OPTIONAL,
                                      "no": ssl.CERT_NONE}[auth], auth != "no")


def client_context(config: Any) -> ssl.SSLContext:
    """The context a replica connects to its primary with (``tls-replication``)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False  # Redis checks the chain, not the name
    _protocols(ctx, config["tls-protocols"])
    cert = config["tls-client-cert-file"] or config["tls-cert-file"]
    if cert:
        key = config["tls-client-key-file"] if config["tls-client-cert-file"] \
            else config["tls-key-file"]
        password = config["tls-client-key-file-pass"] if config["tls-client-cert-file"] \
            else config["tls-key-file-pass"]
        _load(ctx, cert, key, password)
    if not _cas(ctx, config):
        ctx.load_default_certs()
    return ctx


def bus_server_context(config: Any) -> ssl.SSLContext:
    """The context of the cluster bus's listener under ``tls-cluster yes``:
    the server's, with a peer certificate always required.  Raises TlsError."""
    return _listener_context(config, ssl.CERT_REQUIRED, False)
