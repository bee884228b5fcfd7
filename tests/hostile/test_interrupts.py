"""Ctrl-C, SIGTERM and SIGHUP during `certify` (and plain pytest): prompt end, incomplete report, nothing left.

`certify` runs in a subprocess under the probe (re-executing itself through `setpriv` as root, which keeps its pid,
so the signal reaches it); the signal is sent once its backend's first operation shows that rules are running.
A run killed with SIGKILL cannot clean up: the next `certify` removes its directory and ends its processes.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from workspace_conformance.runtime.leftovers import RUN_PREFIX, alive, processes_of
from workspace_conformance.suite import rules

from .backends import STARTED
from .harness import ROOT, Certification, certify

PROMPT = 10.0
"""Seconds `certify` may take to exit after the (last) Ctrl-C."""
TIMEOUT = 300.0
"""Seconds before the probe gives up on an interrupted run (it would take much longer uninterrupted)."""


def _interrupted(
    name: str, tmp_path: Path, loops: str, interrupts: int, signal: str = 'INT', pytest_module: Path | None = None
) -> Certification:
    started = tmp_path / 'started'
    run = certify(
        name,
        tmp_path / 'run',
        scale=1.0,
        loops=loops,
        started=started,
        interrupts=interrupts,
        gap=1.0,
        timeout=TIMEOUT,
        environment={STARTED: str(started)},
        signal=signal,
        pytest_module=pytest_module,
    )
    print(f'{name} on {loops}: SIG{signal} at {run.interrupted_at}, exit {run.returncode} at {run.wall:.1f} s')
    assert not run.timed_out, run.stdout[-3000:]
    assert len(run.interrupted_at) == interrupts, f'certify ended before the interrupts: {run.stdout[-3000:]}'
    assert run.leftover_processes == []
    assert run.leftover_paths == []
    return run


@pytest.mark.parametrize('loops', ['asyncio', 'trio'])
def test_ctrl_c_ends_certify_promptly_with_an_incomplete_report(tmp_path: Path, loops: str) -> None:
    run = _interrupted('slow_operations', tmp_path, loops, interrupts=1)
    assert run.wall - run.interrupted_at[0] < PROMPT
    assert run.returncode == 1, run.stdout[-3000:]
    assert run.report is not None, run.report_problem
    assert run.report.complete is False and run.report.verdict == 'not certified'
    assert run.outcomes().get('missing', 0) > 0
    assert 'Traceback' not in run.stderr, run.stderr


@pytest.mark.parametrize('loops', ['asyncio', 'trio'])
def test_a_second_ctrl_c_during_the_cleanup_still_exits(tmp_path: Path, loops: str) -> None:
    # The first Ctrl-C lands while a rule's scratch directory is being removed, which this backend makes take 60 s.
    run = _interrupted('slow_remove', tmp_path, loops, interrupts=2)
    assert run.wall - run.interrupted_at[1] < PROMPT
    assert run.returncode in (1, 130), run.stdout[-3000:]
    assert run.report is not None, run.report_problem
    assert run.report.complete is False


ORPHANED_INTERRUPT = """
import asyncio, gc, sys
from workspace_conformance.runtime.interrupts import signals_stop_the_run

async def interrupted():
    raise KeyboardInterrupt

if sys.argv[1] == 'certify':
    with signals_stop_the_run():
        pass
loop = asyncio.new_event_loop()
try:
    loop.run_until_complete(loop.create_task(interrupted()))
except KeyboardInterrupt:
    pass
loop.close()
gc.collect()
"""


@pytest.mark.parametrize(('mode', 'reported'), [('plain', True), ('certify', False)])
def test_a_ctrl_c_the_session_took_is_not_reported_again_by_asyncio(mode: str, reported: bool) -> None:
    """A Ctrl-C that lands in the event loop's task is also logged by asyncio when the task is collected."""
    finished = subprocess.run(
        [sys.executable, '-c', ORPHANED_INTERRUPT, mode], capture_output=True, text=True, timeout=60, check=True
    )
    assert ('Task exception was never retrieved' in finished.stderr) is reported, finished.stderr


@pytest.mark.parametrize(
    ('signame', 'loops'),
    [('TERM', 'asyncio'), ('TERM', 'trio'), ('HUP', 'asyncio')],
    ids=['term-asyncio', 'term-trio', 'hup'],
)
def test_sigterm_and_sighup_end_certify_as_ctrl_c_does(tmp_path: Path, signame: str, loops: str) -> None:
    run = _interrupted('slow_operations', tmp_path, loops, interrupts=1, signal=signame)
    assert run.wall - run.interrupted_at[0] < PROMPT
    assert run.returncode == 128 + signal.Signals[f'SIG{signame}'], run.stdout[-3000:]
    assert run.report is not None, run.report_problem
    assert run.report.complete is False and run.report.verdict == 'not certified'
    assert run.outcomes().get('missing', 0) > 0
    assert run.stdout.rstrip().splitlines()[-1].endswith(f'; stopped by SIG{signame})'), run.stdout[-500:]
    assert 'Traceback' not in run.stderr, run.stderr


def test_a_second_sigterm_during_the_cleanup_still_exits(tmp_path: Path) -> None:
    run = _interrupted('slow_remove', tmp_path, 'asyncio', interrupts=2, signal='TERM')
    assert run.wall - run.interrupted_at[1] < PROMPT
    assert run.returncode == 128 + signal.SIGTERM, run.stdout[-3000:]
    assert run.report is not None, run.report_problem
    assert run.report.complete is False
    assert 'Traceback' not in run.stderr, run.stderr


SUITE_MODULE = """
import pytest

from tests.hostile.backends import {factory}
from workspace_conformance import WorkspaceBackendSuite


class TestSlow(WorkspaceBackendSuite):
    @pytest.fixture(scope='class')
    @classmethod
    def backend(cls, tmp_path_factory):
        return {factory}(tmp_path_factory.mktemp('slow'))
"""


@pytest.mark.parametrize(
    ('factory', 'interrupts'), [('slow_operations', 1), ('slow_remove', 2)], ids=['once', 'twice-during-cleanup']
)
def test_sigterm_ends_a_plain_pytest_run_of_a_suite_subclass_as_ctrl_c_does(
    tmp_path: Path, factory: str, interrupts: int
) -> None:
    """Plain pytest: the rules' scratch directories and processes go too (the harness looks for both)."""
    module = tmp_path / 'suite' / 'test_slow_suite.py'
    module.parent.mkdir()
    module.write_text(SUITE_MODULE.format(factory=factory))
    run = _interrupted(factory, tmp_path, 'asyncio', interrupts=interrupts, signal='TERM', pytest_module=module)
    assert run.wall - run.interrupted_at[-1] < PROMPT
    assert run.returncode == 128 + signal.SIGTERM, run.stdout[-3000:]
    assert run.report is not None, run.report_problem
    assert run.report.complete is False and run.outcomes().get('missing', 0) > 0


def _environment(tmp: Path, started: Path) -> dict[str, str]:
    environment = {
        **os.environ,
        'TMPDIR': str(tmp),
        STARTED: str(started),
        'PYTHONPATH': os.pathsep.join(filter(None, [str(ROOT), os.environ.get('PYTHONPATH')])),
    }
    environment.pop('PYTEST_XDIST_WORKER', None)
    environment.pop('PYTEST_CURRENT_TEST', None)
    return environment


def test_after_a_sigkill_the_next_certify_removes_the_dead_runs_directory_and_processes(tmp_path: Path) -> None:
    tmp, cwd, started = tmp_path / 'tmp', tmp_path / 'cwd', tmp_path / 'started'
    tmp.mkdir()
    cwd.mkdir()
    environment = _environment(tmp, started)
    command = [sys.executable, '-m', 'workspace_conformance', 'certify', '--keep-capabilities']
    command += ['--anyio-backend', 'asyncio', '--conformance-profile', 'ci']
    killed = subprocess.Popen(
        [*command, 'tests.hostile.backends:leaves_a_process'],
        cwd=cwd,
        env=environment,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + TIMEOUT
    while not started.exists() and killed.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    killed.kill()
    killed.wait()
    (dead,) = [path for path in tmp.iterdir() if path.name.startswith(RUN_PREFIX)]
    left = processes_of(dead)
    assert left, 'the killed run left no process: the test proves nothing'
    try:
        following = subprocess.run(
            [*command, 'memory', '-k', 'test_exists and not below and not working_dir'],
            cwd=cwd,
            env=environment,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
        print(following.stderr)
        assert following.returncode == 1, following.stdout[-2000:] + following.stderr
        lines = [line for line in following.stderr.splitlines() if 'killed run' in line]
        assert len(lines) == 1 and str(dead) in lines[0], following.stderr
        assert not dead.exists()
        assert not [pid for pid in left if alive(pid)]
        assert list(tmp.iterdir()) == []
        assert list(cwd.iterdir()) == []
    finally:
        for pid in left:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


def test_sigterm_before_the_first_rule_still_writes_a_report_of_missing_rules(tmp_path: Path) -> None:
    run = _interrupted('slow_to_build', tmp_path, 'asyncio', interrupts=1, signal='TERM')
    assert run.wall - run.interrupted_at[0] < PROMPT
    assert run.returncode == 128 + signal.SIGTERM, run.stdout[-3000:]
    assert run.report is not None, run.report_problem
    assert run.report.complete is False and run.outcomes() == {'missing': len(rules())}
    assert run.stdout.rstrip().endswith('; stopped by SIGTERM before any rule ran)'), run.stdout[-500:]


LEFT_THREAD = """
import threading
import time
from workspace_conformance import cli

threading.Thread(target=threading.Event().wait).start()  # never ends, and is not a daemon
print(time.monotonic(), flush=True)  # the clock is system-wide: the parent times the exit, not the imports
cli._exit_even_if_a_thread_stays(143)
"""


def test_a_stopped_run_exits_even_if_the_interrupt_left_a_thread_behind() -> None:
    """An interrupted event loop can leave an idle worker thread that Python would wait for at exit forever."""
    finished = subprocess.run([sys.executable, '-c', LEFT_THREAD], capture_output=True, text=True, timeout=60)
    ended = time.monotonic()
    assert finished.returncode == 143, finished.stderr
    assert ended - float(finished.stdout.split()[0]) < PROMPT  # a 5 s wait, then the exit
    assert 'did not exit within 5 s of its verdict' in finished.stderr
