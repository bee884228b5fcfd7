"""Rules checked at once against one environment give exactly the outcomes of a serial run, failures included."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from .runner import QUICK_CERTIFY

pytestmark = pytest.mark.slow

BROKEN = '''
from workspace_conformance.doubles import InMemoryBackend


class Mangling(InMemoryBackend):
    """Loses the last byte of every file longer than 100 bytes, and hides dotfiles from listings."""

    async def read_bytes(self, path):
        data = await super().read_bytes(path)
        return data[:-1] if len(data) > 100 else data

    async def list_dir(self, path):
        return [entry for entry in await super().list_dir(path) if not entry.name.startswith('.')]


def mangling():
    return Mangling()
'''
"""The in-memory double with two bugs: its files-only run (command rules not applicable) and its failures, compared
at once in one run (`local` compares LocalWorkspaceBackend, `provider` the lifecycle fixtures)."""


def _certify(target: str, report: Path, *extra: str, cwd: Path) -> dict[str, Any]:
    temporary = cwd / 'tmp'
    temporary.mkdir(exist_ok=True)
    environment = {
        **os.environ,
        'PYTHONPATH': f'{cwd}{os.pathsep}{os.environ.get("PYTHONPATH", "")}',
        'TMPDIR': str(temporary),
    }
    subprocess.run(
        [
            sys.executable,
            '-m',
            'workspace_conformance',
            'certify',
            target,
            *QUICK_CERTIFY,
            '--report',
            str(report),
            *extra,
        ],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=environment,
        timeout=900,
        check=False,
    )
    loaded: dict[str, Any] = json.loads((report / 'report.json').read_text())
    return loaded


_VARYING = re.compile(r'[0-9a-f]{8,}|/tmp/\S+|\d+\.\d+ s')
"""What differs between any two runs, serial or not: scratch directory ids, temporary paths, measured seconds."""


def _outcomes(report: dict[str, Any]) -> list[tuple[Any, ...]]:
    def steady(text: object) -> object:
        return _VARYING.sub('~', text) if isinstance(text, str) else text

    return sorted(
        (
            outcome['rule_id'],
            outcome['anyio_backend'],
            outcome['outcome'],
            outcome.get('skip_kind'),
            steady(outcome.get('reason')),
            steady(outcome.get('excerpt')),
        )
        for suite in report['suites']
        for outcome in suite['results']
    )


LOCAL_TARGETS = frozenset({'local', 'local-shell'})
"""Targets on pydantic-ai's LocalWorkspaceBackend: every command (on local-shell, every file operation too) is a
subprocess with a 2-5 s spawn and reap grace of its own. `auto` never runs a local backend's rules at once; forced
to 16 at once on a loaded 2-core machine, CI saw those graces and a 15 s kill wait missed (4-6 rules of local-shell,
`local workspace subprocess operation exceeded its grace period`), so they are compared at 4 at once."""


def _failed_only_together(together: dict[str, Any], serial: dict[str, Any]) -> set[str]:
    """Rules that passed serially and failed at once, when that is the only difference between the two runs."""
    passed = {(outcome[0], outcome[1]) for outcome in _outcomes(serial) if outcome[2] == 'passed'}
    serial_outcomes, together_outcomes = set(_outcomes(serial)), set(_outcomes(together))
    differing = [outcome for outcome in _outcomes(together) if outcome not in serial_outcomes]
    lost = [outcome for outcome in _outcomes(serial) if outcome not in together_outcomes]
    if not all(outcome[2] == 'failed' and outcome[:2] in passed for outcome in differing):
        return set()
    if {outcome[0] for outcome in lost} != {outcome[0] for outcome in differing}:
        return set()
    return {outcome[0] for outcome in differing}


def _with(report: dict[str, Any], again: dict[str, Any], rules: set[str]) -> dict[str, Any]:
    """`report` whose outcomes of `rules` are those of `again`."""
    redone = [outcome for suite in again['suites'] for outcome in suite['results'] if outcome['rule_id'] in rules]
    (suite,) = report['suites']
    kept = [outcome for outcome in suite['results'] if outcome['rule_id'] not in rules]
    return {**report, 'suites': [{**suite, 'results': kept + redone}]}


# `local-shell` is left out: it is `local` with every file operation a command, and its serial run is certified
# by test_self_certification; at once, it measured only LocalWorkspaceBackend's own spawn graces under load.
# `memory` is left out: `broken:mangling` is InMemoryBackend with two bugs, so its run compares the files-only
# double's passes and not-applicable command rules at once too, with failures (a mangled LocalWorkspaceBackend
# cost as much as `local` again and compared nothing `local` and this do not); test_targets certifies `memory`.
@pytest.mark.parametrize(
    ('target', 'verdict'), [('local', 'certified'), ('provider', 'certified'), ('broken:mangling', 'not certified')]
)
def test_concurrent_and_serial_runs_give_the_same_outcomes(target: str, verdict: str, tmp_path: Path) -> None:
    """Serial and at once, a target's rules have the same outcomes; the serial run gets the target's verdict and
    leaves nothing in TMPDIR (for `provider`, test_targets leaves both to this run)."""
    (tmp_path / 'broken.py').write_text(textwrap.dedent(BROKEN))
    serial = _certify(target, tmp_path / 'serial', '--conformance-concurrency', '1', cwd=tmp_path)
    assert serial['verdict'] == verdict
    assert list((tmp_path / 'tmp').iterdir()) == [], 'the run left files in TMPDIR'
    at_once = '4' if target in LOCAL_TARGETS else '16'
    together = _certify(target, tmp_path / 'together', '--conformance-concurrency', at_once, cwd=tmp_path)
    assert serial['complete'] and together['complete']
    # A rule that failed only at once is checked at once again, with only the others that did: a second failure of
    # the same kind is a real difference; a pass was the load of the first batch.
    missed = _failed_only_together(together, serial)
    if missed:
        again = _certify(
            target,
            tmp_path / 'again',
            '--conformance-concurrency',
            at_once,
            '-k',
            ' or '.join(sorted(missed)),
            cwd=tmp_path,
        )
        together = _with(together, again, missed)
    only_serial = sorted(set(_outcomes(serial)) - set(_outcomes(together)))
    only_together = sorted(set(_outcomes(together)) - set(_outcomes(serial)))
    assert not only_serial and not only_together, f'serial only: {only_serial}; concurrent only: {only_together}'
    assert missed or serial['verdict'] == together['verdict']  # a report patched with rules run again keeps its own
    assert _outcomes(serial) == _outcomes(together)
    if target.startswith('broken'):
        failed = [outcome for outcome in _outcomes(together) if outcome[2] == 'failed']
        assert len(failed) >= 3, failed  # the comparison covered failure messages, not only passes
