"""Ctrl-C during `certify`: it ends promptly with an incomplete report and cleans up; a second Ctrl-C still exits.

`certify` runs in a subprocess under the probe (re-executing itself through `setpriv` as root, which keeps its pid,
so the signal reaches it); SIGINT is sent once its backend's first operation shows that rules are running.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from .backends import STARTED
from .harness import Certification, certify

PROMPT = 10.0
"""Seconds `certify` may take to exit after the (last) Ctrl-C."""
TIMEOUT = 300.0
"""Seconds before the probe gives up on an interrupted run (it would take much longer uninterrupted)."""


def _interrupted(name: str, tmp_path: Path, loops: str, interrupts: int) -> Certification:
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
    )
    print(f'{name} on {loops}: Ctrl-C at {run.interrupted_at}, exit {run.returncode} at {run.wall:.1f} s')
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
from workspace_conformance.interrupts import signals_stop_the_run

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
