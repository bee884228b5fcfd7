"""The kept Prefect harness starts even when a stranger takes the port Prefect picked before its server binds it."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest

from workspace_conformance.capability import _durable

prefect_utilities = pytest.importorskip('prefect.testing.utilities')

pytestmark = pytest.mark.slow


@pytest.fixture
def stranger() -> Iterator[tuple[int, list[bytes]]]:
    """A loopback listener that answers every connection as an HTTP/2 server does: a binary SETTINGS frame."""
    server = socket.create_server(('127.0.0.1', 0))
    server.settimeout(0.2)
    heard: list[bytes] = []
    done = threading.Event()

    def answer() -> None:
        while not done.is_set():
            try:
                peer, _ = server.accept()
            except TimeoutError:
                continue
            with peer:
                heard.append(peer.recv(64))
                peer.sendall(b'\x00\x00\x00\x04\x00\x00\x00\x00\x00')

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1], heard
    finally:
        done.set()
        thread.join(5)
        server.close()


def test_a_stranger_on_the_picked_port_costs_one_more_start(
    stranger: tuple[int, list[bytes]], monkeypatch: pytest.MonkeyPatch
) -> None:
    port, heard = stranger
    picks = iter([port])
    real_pick = prefect_utilities._find_available_port
    monkeypatch.setattr(prefect_utilities, '_find_available_port', lambda: next(picks, None) or real_pick())
    from prefect.server.api.server import SubprocessASGIServer

    with _durable._prefect_lock:  # an earlier test of this process may have started the kept harness
        while _durable._prefect:
            _durable._prefect.pop().close()
    try:
        with _durable.prefect_harness(120):
            harness = _durable._prefect[0]
            assert harness.healthy()
            url = str(harness.settings.settings.api.url)
        assert f':{port}/' not in url, 'the harness kept the port a stranger answered on'
        assert heard, "the stranger was never asked, so this test did not reproduce Prefect's race"
        leftover = [s for s in SubprocessASGIServer._instances.values() if s.port == port and s.server_process]
        assert not leftover, 'the server of the failed start was left running'
    finally:
        with _durable._prefect_lock:
            while _durable._prefect:
                _durable._prefect.pop().close()
