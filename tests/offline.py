"""Network access blocked in the processes tests start, as tests/conftest.py's guard blocks it in the test process:
a connection that leaves the machine fails (Unix sockets stay open)."""

from __future__ import annotations

import inspect
import socket


def block_network() -> None:
    """Make every socket connection except a Unix socket's raise OSError, in this process."""
    real_connect, real_connect_ex = socket.socket.connect, socket.socket.connect_ex

    def allowed(sock: socket.socket, address: object) -> None:
        if sock.family != getattr(socket, "AF_UNIX", None):
            raise OSError(f"network access is blocked (attempted connection to {address!r})")

    def connect(sock: socket.socket, address: object) -> None:
        allowed(sock, address)
        return real_connect(sock, address)

    def connect_ex(sock: socket.socket, address: object) -> int:
        allowed(sock, address)
        return real_connect_ex(sock, address)

    socket.socket.connect = connect  # type: ignore[method-assign]
    socket.socket.connect_ex = connect_ex  # type: ignore[method-assign]


# The same as source code, for a script run where this module cannot be imported (`python -c`, a file elsewhere).
PRELUDE = f"import socket\n{inspect.getsource(block_network)}\nblock_network()\n"
