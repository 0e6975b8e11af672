"""The connection's own commands, Redis's networking.c and tracking.c: the handshake
(HELLO, AUTH, SELECT, PING ...), CLIENT, and client-side caching."""
