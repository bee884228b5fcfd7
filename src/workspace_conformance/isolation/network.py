"""Rules on the host's local services: a listener on the host's 127.0.0.1 or its unix socket is out of reach."""

from __future__ import annotations

import shlex

from pydantic_ai.workspaces import WorkspaceBackend

from ..authoring import lacking, rule
from ._support import ATTEMPT, HostCanaries, Listener, attempts, in_sandbox

__all__ = ('NetworkIsolationRules',)

_PYTHON_TCP = 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 2).close()'
_PYTHON_UNIX = 'import socket, sys; s = socket.socket(socket.AF_UNIX); s.settimeout(2); s.connect(sys.argv[1])'


def _tcp_script(port: int) -> str:
    """Try every client tool the sandbox has against 127.0.0.1:`port`, and only that address."""
    url = f'http://127.0.0.1:{port}/'
    return ATTEMPT + '\n'.join(
        (
            f'has nc && attempt nc nc -w 2 127.0.0.1 {port}',
            f"has bash && attempt bash-dev-tcp bash -c 'exec 3<>/dev/tcp/127.0.0.1/{port}'",
            f"for py in python3 python; do has $py && {{ attempt $py $py -c '{_PYTHON_TCP}' {port}; break; }}; done",
            f'applet nc && attempt busybox-nc busybox nc -w 2 127.0.0.1 {port}',
            f'applet wget && attempt busybox-wget busybox wget -q -T 2 -O /dev/null {url}',
            f'has curl && attempt curl curl -s -m 2 -o /dev/null {url}',
            '',
        )
    )


TCP_CLIENTS = ('nc', 'bash', 'python3', 'python', 'busybox nc', 'busybox wget', 'curl')
"""The baseline's names of the clients `_tcp_script` tries."""
UNIX_CLIENTS = ('nc -U', 'socat', 'python3', 'python')
"""The baseline's names of the clients `_unix_script` tries."""
NO_PATH = 'no-such-path'
"""What the unix socket script says when the socket's path does not exist in the sandbox."""


def _unix_script(path: str) -> str:
    """Say whether the unix socket's `path` exists in the sandbox, and try every client tool it has against it."""
    quoted = shlex.quote(path)
    return ATTEMPT + '\n'.join(
        (
            f'[ -e {quoted} ] || echo {NO_PATH}',
            f"has nc && nc -h 2>&1 | grep -q -- '-U' && attempt nc-U nc -U -w 2 {quoted}",
            f'has socat && attempt socat socat -T 2 /dev/null UNIX-CONNECT:{quoted}',
            f"for py in python3 python; do has $py && {{ attempt $py $py -c '{_PYTHON_UNIX}' {quoted}; break; }}; done",
            '',
        )
    )


def _reached(listener: Listener, tried: list[str], connected: list[str]) -> str | None:
    """Why the listener was reached (it saw a connection, or a client said it connected), or None."""
    seen = listener.connections()
    if not seen and not connected:
        return None
    return (
        f'the host listener {listener.address} saw {seen} connection(s) from the sandbox; clients tried: '
        f'{", ".join(tried)}; said they connected: {", ".join(connected) or "none"}'
    )


class NetworkIsolationRules:
    """Rules on listeners the suite opens on the host for the rule: 127.0.0.1 on a random port, a unix socket."""

    @rule(area='network', requires=['commands', 'posix_shell'], since='0.3.0', alone=True, claim='network')
    async def test_host_loopback_listener_is_unreachable(
        self, backend: WorkspaceBackend, host_canaries: HostCanaries
    ) -> None:
        """No client in the sandbox connects to a TCP listener on the host's 127.0.0.1."""
        listener = host_canaries.tcp_listener()
        port = int(listener.address.rpartition(':')[2])
        tried, connected = attempts(await in_sandbox(backend, _tcp_script(port)))
        if not tried:
            why = 'no client tool in the sandbox (nc, bash, python3, python, busybox, curl)'
            lacking(TCP_CLIENTS, 'no client tool was tried', why)
        reached = _reached(listener, tried, connected)
        assert reached is None, f'{reached}; the backend claims network isolation'

    @rule(area='network', requires=['commands', 'posix_shell'], since='0.3.0', alone=True, claim='network')
    async def test_host_unix_socket_is_unreachable(
        self, backend: WorkspaceBackend, host_canaries: HostCanaries
    ) -> None:
        """No client in the sandbox connects to a unix socket the host listens on in its temporary directory."""
        listener = host_canaries.unix_listener()
        result = await in_sandbox(backend, _unix_script(listener.address))
        tried, connected = attempts(result)
        hidden = NO_PATH in result.stdout.splitlines()  # no path to connect by: no client could reach it
        if not tried and not hidden:
            why = 'no unix socket client in the sandbox (nc -U, socat, python3, python)'
            lacking(UNIX_CLIENTS, 'no client tool was tried', why)
        reached = _reached(listener, tried, connected)
        assert reached is None, f'{reached}; the backend claims network isolation'
