"""Upstream's conformance suite and ours against LocalWorkspaceBackend, on asyncio and trio, in one pytest run.

Prints, for each suite: wall time, rules that ran (passed or failed; skips excluded), wall time per rule and
backend calls per rule (every protocol operation, counted by a wrapper with exactly the backend's protocols),
then the ratios. Goal: our per-rule cost <= upstream's, our whole run <= 3x upstream's.
Usage: python bench/suite_vs_upstream.py [--profile ci|certify|dev] [--loops asyncio trio]

This machine's disk makes files slowly (about 1 ms each; our listing rules make 9,000 a run, upstream's a handful):
`TMPDIR=<a tmpfs> python bench/suite_vs_upstream.py` measures the suites rather than the disk (docs/speed.md).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pytest

MODULE = """
import os

import pytest
from pydantic_ai.workspaces import LocalWorkspaceBackend
from pydantic_ai.workspaces.conformance import WorkspaceBackendSuite as Upstream

from workspace_conformance import WorkspaceBackendSuite as Ours
from workspace_conformance._mirror import Mirror, mirrored_class, protocol_members

CALLS = {}


class Counting(Mirror):
    def __init__(self, wrapped, key):
        self._wrapped = wrapped
        self._key = key

    async def _intercept(self, name, args, kwargs, call):
        CALLS[self._key] = CALLS.get(self._key, 0) + 1
        rule = os.environ.get('PYTEST_CURRENT_TEST', '?').split('::')[-1].split(' ')[0].split('[')[0]
        CALLS[(self._key, rule)] = CALLS.get((self._key, rule), 0) + 1
        return await call()


def counting(path, key):
    local = LocalWorkspaceBackend(path)
    return mirrored_class(Counting, protocol_members(local))(local, key)


LOOPS = __LOOPS__


class TestUpstream(Upstream):
    @pytest.fixture(params=LOOPS)
    def anyio_backend(self, request):
        return request.param

    @pytest.fixture
    def backend(self, tmp_path):
        return counting(tmp_path, 'upstream')


class TestOurs(Ours):
    @pytest.fixture(scope='class', params=LOOPS)
    @classmethod
    def anyio_backend(cls, request):
        return request.param

    @pytest.fixture
    def backend(self, tmp_path):
        return counting(tmp_path, 'ours')
"""


GENERATED = ('test_generated_', 'test_file_operations_match_the_reference_model')
"""Our rules that run many Hypothesis examples: each is a whole family of checks, so they are shown apart."""


class Timing:
    """Wall time of the rules that ran, per suite class."""

    def __init__(self) -> None:
        self.seconds: defaultdict[str, float] = defaultdict(float)
        self.ran: Counter[str] = Counter()
        self.generated_seconds = 0.0
        self.generated_ran = 0

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        suite = 'upstream' if '::TestUpstream::' in report.nodeid else 'ours'
        self.seconds[suite] += report.duration
        generated = suite == 'ours' and any(word in report.nodeid for word in GENERATED)
        if generated:
            self.generated_seconds += report.duration
        if report.when == 'call' and not report.skipped:
            self.ran[suite] += 1
            self.generated_ran += generated


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('--profile', default='ci', choices=['ci', 'certify', 'dev'])
    parser.add_argument('--loops', nargs='+', default=['asyncio', 'trio'], choices=['asyncio', 'trio'])
    arguments = parser.parse_args()
    profile = arguments.profile
    timing = Timing()
    with tempfile.TemporaryDirectory() as directory:
        (Path(directory) / 'test_bench.py').write_text(MODULE.replace('__LOOPS__', repr(tuple(arguments.loops))))
        (Path(directory) / 'pytest.ini').write_text('[pytest]\n')
        started = time.perf_counter()
        status = pytest.main(
            [
                directory,
                '-q',
                '--no-header',
                '-p',
                'no:cacheprovider',
                '--rootdir',
                directory,
                '-c',
                str(Path(directory) / 'pytest.ini'),
                '--conformance-profile',
                profile,
            ],
            plugins=[timing],
        )
        elapsed = time.perf_counter() - started
        calls: dict[str, Any] = sys.modules['test_bench'].CALLS
    loops = ' and '.join(arguments.loops)
    print(f'\nprofile {profile} on {loops}; whole pytest run {elapsed:.1f} s; pytest exit {int(status)}')
    for suite in ('upstream', 'ours'):
        ran = max(1, timing.ran[suite])
        print(
            f'{suite:<9} {timing.seconds[suite]:7.2f} s for {timing.ran[suite]:3} rules: '
            f'{timing.seconds[suite] / ran:6.3f} s/rule, {calls.get(suite, 0) / ran:6.1f} backend calls/rule'
        )
    per_rule = (timing.seconds['ours'] / max(1, timing.ran['ours'])) / (
        timing.seconds['upstream'] / max(1, timing.ran['upstream'])
    )
    whole = timing.seconds['ours'] / timing.seconds['upstream']
    print(f'ratio ours/upstream: per rule {per_rule:.2f}x, whole run {whole:.2f}x')
    plain_ran = max(1, timing.ran['ours'] - timing.generated_ran)
    plain_seconds = timing.seconds['ours'] - timing.generated_seconds
    plain_calls = calls.get('ours', 0) - sum(
        n for key, n in calls.items() if isinstance(key, tuple) and key[0] == 'ours' and key[1].startswith(GENERATED)
    )
    upstream_per_rule = timing.seconds['upstream'] / max(1, timing.ran['upstream'])
    print(
        f'ours without the {timing.generated_ran} generated-case rules: {plain_seconds:.2f} s for {plain_ran} rules, '
        f'{plain_seconds / plain_ran:.3f} s/rule ({plain_seconds / plain_ran / upstream_per_rule:.2f}x upstream), '
        f'{plain_calls / plain_ran:.1f} backend calls/rule'
    )
    for suite in ('upstream', 'ours'):
        heaviest = sorted(
            ((n, key[1]) for key, n in calls.items() if isinstance(key, tuple) and key[0] == suite), reverse=True
        )[:5]
        print(f'{suite} heaviest rules by backend calls: ' + ', '.join(f'{rule} {n}' for n, rule in heaviest))
    return 0


if __name__ == '__main__':
    sys.exit(main())
