"""`serve e2b`'s envd rights on a sandbox's files never reach a host file through a link the sandbox made.

The service lends its own write bit to a file a sandbox owns when mode bits refuse envd (envd runs as root); a
sandbox process may swap that file, or a directory above it, for a link to any host file between the check and
the change. These tests build a sandbox's root without starting the service or any process.
"""

from __future__ import annotations

import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from workspace_conformance.services.e2b.sandbox import Fidelity, Sandbox


def _sandbox(tmp_path: Path) -> Sandbox:
    return Sandbox(
        tmp_path / 'state', template='base', timeout=60, env_vars={}, metadata={}, fidelity=Fidelity(), bwrap=None
    )


def _refused_then(write: Callable[[], None]) -> Callable[[], None]:
    """An operation the mode bits refuse the first time (as they refuse a service without root's bypass)."""
    calls: list[None] = []

    def operation() -> None:
        calls.append(None)
        if len(calls) == 1:
            raise PermissionError('refused')
        write()

    return operation


def _host_file(tmp_path: Path) -> Path:
    outside = tmp_path / 'host' / 'secret'
    outside.parent.mkdir()
    outside.write_text('host')
    outside.chmod(0o400)
    return outside


def test_a_link_to_a_host_file_is_refused_and_the_host_file_keeps_its_mode(tmp_path: Path) -> None:
    outside = _host_file(tmp_path)
    sandbox = _sandbox(tmp_path)
    link = sandbox.root / 'home' / 'user' / 'link'
    link.symlink_to(outside)
    with pytest.raises(PermissionError):
        sandbox.as_envd(link, stat.S_IWUSR, _refused_then(lambda: None))
    assert stat.S_IMODE(outside.stat().st_mode) == 0o400


def test_a_directory_swapped_for_a_link_is_refused_and_the_host_file_keeps_its_mode(tmp_path: Path) -> None:
    outside = _host_file(tmp_path)
    sandbox = _sandbox(tmp_path)
    swapped = sandbox.root / 'home' / 'user' / 'work'
    swapped.symlink_to(outside.parent)  # the sandbox replaced its directory `work` with a link to a host directory
    with pytest.raises(PermissionError):
        sandbox.as_envd(swapped / 'secret', stat.S_IWUSR, _refused_then(lambda: None))
    assert stat.S_IMODE(outside.stat().st_mode) == 0o400


def test_a_sandbox_file_gets_the_bit_for_the_operation_only(tmp_path: Path) -> None:
    sandbox = _sandbox(tmp_path)
    locked = sandbox.root / 'home' / 'user' / 'locked'
    locked.write_text('old')
    locked.chmod(0o400)
    seen: list[int] = []
    sandbox.as_envd(locked, stat.S_IWUSR, _refused_then(lambda: seen.append(stat.S_IMODE(locked.stat().st_mode))))
    assert seen == [0o600]
    assert stat.S_IMODE(locked.stat().st_mode) == 0o400
