"""Hostile backends: the harness never hangs, never crashes, never leaks, and never touches what is not its own.

Each backend of the gallery is certified whole, through the real CLI, in a subprocess under a child-subreaper
probe (so a hang or crash of the harness cannot take this worker down, and every process it leaves is found).
Each run must end within the bound computed from the rule catalog (`harness.bound`), exit 1, write a parseable
report, fail the rules the backend broke saying what it did, and leave no process, temporary or scratch directory.

Most of these runs wait on hangs, not on the CPU: the first test to ask runs the whole gallery, `CONCURRENT` at a
time, once per test session (pytest-xdist workers share it through a lock file); each test then checks its run.
`python scripts/hostile_table.py` prints the same runs as a table.
"""

from __future__ import annotations

import fcntl
import os
import re
import traceback
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from workspace_conformance.runtime.leftovers import alive

from .backends import IMMORTALS
from .gallery import DEAF, GALLERY, SCALE_ARTEFACT, Hostile
from .harness import Certification, certify_entry

CONCURRENT = 5
"""Certifications run at once: the three hang shapes at time scale 1 sleep about 150 s each, and the short runs use
the other two slots meanwhile (at 3, the short ones queued behind the sleepers and the gallery took 353 s)."""
pytestmark = pytest.mark.xdist_group('hostile-gallery')
"""Under `--dist loadgroup` (nox) the gallery's tests go to one worker, which runs the gallery while the other goes
on with the rest of the session instead of waiting for the same runs on the lock."""
FLOODED = ('floods_output', 'prints_flood')
OUTPUT_LIMIT = 2 * 1024 * 1024
"""Bytes the terminal output and the report.json of a flooded run stay under, though the backend produced 100 MiB."""


def _summary(entry: Hostile, run: Certification) -> str:
    outcomes = ', '.join(f'{count} {outcome}' for outcome, count in sorted(run.outcomes().items()))
    return (
        f'{entry.id}: {run.wall:.1f} s of a {run.bound:.1f} s bound, exit {run.returncode}; {outcomes}; '
        f'leftovers: {len(run.leftover_processes)} processes, {len(run.leftover_paths)} paths'
    )


def _certify_into(entry: Hostile, root: Path) -> None:
    """Certify `entry` and write its result to `<id>.json`, or what went wrong running it to `<id>.error`."""
    try:
        (root / f'{entry.id}.json').write_text(certify_entry(entry, root).to_json())
    except BaseException:
        (root / f'{entry.id}.error').write_text(traceback.format_exc())


@pytest.fixture(scope='session')
def gallery_runs(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Path:
    """The directory holding each selected gallery certification's result (`<id>.json`), run once per session."""
    selected = set()
    for item in request.session.items:  # only the entries this session runs (`-k`)
        callspec = getattr(item, 'callspec', None)
        entry = None if callspec is None else callspec.params.get('entry')
        if isinstance(entry, Hostile):
            selected.add(entry.id)
    base = tmp_path_factory.getbasetemp()
    root = (base.parent if os.environ.get('PYTEST_XDIST_WORKER') else base) / 'hostile-gallery'
    root.mkdir(exist_ok=True)
    with open(root / 'lock', 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (root / 'done').exists():
            # The longest runs first, so the last ones to start are short.
            chosen = [entry for entry in GALLERY if entry.id in selected]
            longest_first = sorted(chosen, key=lambda entry: -entry.expected_seconds)
            with ThreadPoolExecutor(CONCURRENT) as pool:
                for entry in longest_first:
                    pool.submit(_certify_into, entry, root)
            (root / 'done').touch()
    return root


@pytest.mark.parametrize('entry', GALLERY, ids=[entry.id for entry in GALLERY])
def test_a_hostile_backend_is_certified_within_the_bound_and_leaves_nothing(
    entry: Hostile, gallery_runs: Path, record_property: Callable[[str, object], None]
) -> None:
    error = gallery_runs / f'{entry.id}.error'
    assert not error.exists(), error.read_text()
    run = Certification.from_json((gallery_runs / f'{entry.id}.json').read_text())
    spawned = gallery_runs / entry.id / 'spawned'
    summary = _summary(entry, run) if run.report else f'{entry.id}: no report'
    print(summary)
    record_property('hostile', summary)
    assert not run.timed_out, f'{entry.id} did not finish within its {run.bound:.1f} s bound:\n{run.stdout[-3000:]}'
    assert run.wall < run.bound
    if entry.max_seconds is not None:
        assert run.wall < entry.max_seconds, f'{entry.id} took {run.wall:.1f} s, more than {entry.max_seconds:g} s'
    if entry.stops is not None:  # the preflight stopped it: one line, status 2, no report, nothing left
        lines = run.stderr.strip().splitlines()
        assert run.returncode == 2 and len(lines) == 1 and re.search(entry.stops, lines[0]), run.stderr
        assert run.report is None and run.leftover_processes == [] and run.leftover_paths == []
        return
    assert run.returncode == 1, run.stdout[-3000:]
    assert run.report is not None, run.report_problem
    assert 'INTERNALERROR' not in run.stdout and 'Traceback' not in run.stderr, run.stderr
    assert run.leftover_processes == []
    assert run.leftover_paths == []

    outcomes = run.outcomes()
    failures = run.failures()
    assert 'error' not in outcomes, run.stdout[-3000:]
    if entry.complete:
        assert run.report.complete and 'missing' not in outcomes, outcomes
    else:  # the watchdog interrupted the one rule that ignored cancellation, and the run stopped there
        assert not run.report.complete and run.report.verdict == 'not certified'
        deaf = [rule for rule, text in failures.items() if re.search(DEAF, text)]
        assert len(deaf) == 1, failures
    saying = {rule for rule, text in failures.items() if re.search(entry.says, text)}
    for sentinel in entry.sentinels:
        assert f'{sentinel}[{entry.loops}]' in saying, failures.get(f'{sentinel}[{entry.loops}]')
    unexplained = {
        rule: text for rule, text in failures.items() if rule not in saying and not re.search(SCALE_ARTEFACT, text)
    }
    assert not unexplained, 'failures that do not say what the backend did:\n' + '\n'.join(
        f'{rule}: {text}' for rule, text in unexplained.items()
    )
    if entry.name == 'spawns_immortals':
        pids = [int(line) for line in spawned.read_text().split()]
        assert len(pids) == IMMORTALS and not any(alive(pid) for pid in pids)
    else:
        assert saying, failures
    if entry.name in FLOODED:
        assert run.stdout_bytes < OUTPUT_LIMIT
        assert (Path(run.report_dir) / 'report.json').stat().st_size < OUTPUT_LIMIT
