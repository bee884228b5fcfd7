"""Run directories of dead runs: found by their owner record, removed with their processes; a live run's never."""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from workspace_conformance import cli
from workspace_conformance.runtime.leftovers import OWNER_FILE, RUN_PREFIX, alive, run_directory, stale_runs


def _start_time(pid: int) -> int:
    return int(Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()[19])


def _run_dir(tmp: Path, name: str, owner: dict[str, object] | str | None) -> Path:
    directory = tmp / f'{RUN_PREFIX}{name}'
    (directory / 'environments').mkdir(parents=True)
    if owner is not None:
        (directory / OWNER_FILE).write_text(owner if isinstance(owner, str) else json.dumps(owner))
    return directory


def _record(pid: int, start: int, **changes: object) -> dict[str, object]:
    record: dict[str, object] = {
        'pid': pid,
        'start_time': start,
        'boot_id': Path('/proc/sys/kernel/random/boot_id').read_text().strip(),
        'pid_namespace': os.readlink('/proc/self/ns/pid'),
    }
    return {**record, **changes}


@pytest.fixture
def tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    place = tmp_path / 'tmp'
    place.mkdir()
    monkeypatch.setenv('TMPDIR', str(place))
    monkeypatch.setattr(tempfile, 'tempdir', str(place))
    return place


@pytest.fixture
def dead_pid() -> int:
    """The pid of a process that has exited (and been reaped), with its start time."""
    process = subprocess.Popen(['true'])
    process.wait()
    return process.pid


@contextlib.contextmanager
def _sleeping_in(directory: Path) -> Iterator[int]:
    process = subprocess.Popen(['sleep', '60'], cwd=directory, start_new_session=True)
    try:
        yield process.pid
    finally:
        with contextlib.suppress(OSError):
            os.kill(process.pid, signal.SIGKILL)
        process.wait()


def test_a_run_directory_records_its_owner(tmp: Path) -> None:
    with run_directory(RUN_PREFIX) as directory:
        record = json.loads((directory / OWNER_FILE).read_text())
        assert record['pid'] == os.getpid() and record['start_time'] == _start_time(os.getpid())
        assert stale_runs() == []
    assert not directory.exists()


def test_clean_removes_only_dead_runs_and_their_processes(tmp: Path, dead_pid: int) -> None:
    me = os.getpid()
    dead = _run_dir(tmp, 'dead', _record(dead_pid, 12345))
    reused = _run_dir(tmp, 'reused', _record(me, _start_time(me) + 1))
    rebooted = _run_dir(tmp, 'rebooted', _record(me, _start_time(me), boot_id='another-boot'))
    kept = {
        'alive': _run_dir(tmp, 'alive', _record(me, _start_time(me))),
        'no-owner': _run_dir(tmp, 'no-owner', None),
        'corrupt': _run_dir(tmp, 'corrupt', '{"pid": '),
        'other-namespace': _run_dir(tmp, 'other-ns', _record(dead_pid, 1, pid_namespace='pid:[1]')),
    }
    unrelated = tmp / 'something-else'
    unrelated.mkdir()
    out = io.StringIO()
    with _sleeping_in(dead / 'environments') as worker, contextlib.redirect_stdout(out):
        status = cli.main(['clean'])
        assert not alive(worker)
    lines = out.getvalue().splitlines()
    assert status == 0
    assert [line.split()[:2] for line in lines] == [['removed', str(path)] for path in (dead, rebooted, reused)]
    assert f'owner pid {dead_pid} gone; ended its processes {worker}' in lines[0]
    assert 'the machine has restarted since' in lines[1] and 'that pid is now another process' in lines[2]
    assert not dead.exists() and not reused.exists() and not rebooted.exists()
    assert all(path.exists() for path in kept.values()) and unrelated.exists()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli.main(['clean']) == 0
    assert out.getvalue() == 'nothing to remove: no run directory of a dead run\n'
