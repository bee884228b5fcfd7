"""Upstream's suite and ours against a backend whose every call is a network round trip, in one pytest run each.

The backend is `FaultyBackend(LocalWorkspaceBackend(dir), latency={'*': L})`, one per suite class (class
scope, as a remote sandbox is), asyncio, the same settings for both suites, no xdist. For each latency it prints
both walls, the rules that ran (passed or failed; skips excluded) and the ratio of the walls on its last line.
Goal: ratio <= 1.0 at 50 and 200 ms. Extra pytest arguments (after `--`) go to both runs, e.g.
`-- --conformance-concurrency 1` for our serial baseline.
Usage: python bench/remote_latency.py [--latency 0 0.05 0.2] [--profile ci] [-- PYTEST_ARGS...]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import pytest

MODULE = """
import pytest
from pydantic_ai.workspaces import LocalWorkspaceBackend
from pydantic_ai.workspaces.conformance import WorkspaceBackendSuite as Upstream

from workspace_conformance import WorkspaceBackendSuite as Ours
from workspace_conformance.doubles import FaultyBackend

LATENCY = {latency!r}


def remote(tmp_path_factory):
    return FaultyBackend(LocalWorkspaceBackend(tmp_path_factory.mktemp('remote')), latency={{'*': LATENCY}})


class Test{suite}({suite_base}):
    @pytest.fixture(scope='class')
    def anyio_backend(self):
        return 'asyncio'

    @pytest.fixture(scope='class')
    def backend(self, tmp_path_factory):
        return remote(tmp_path_factory)
"""


class Ran:
    """Rules that ran (passed or failed) in one pytest run."""

    def __init__(self) -> None:
        self.count: Counter[str] = Counter()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == 'call' and not report.skipped:
            self.count[report.outcome] += 1


def run(suite: str, latency: float, profile: str, extra: list[str]) -> tuple[float, Counter[str]]:
    """Wall seconds and outcomes of one suite's whole pytest run at `latency` seconds per backend call."""
    base = 'Upstream' if suite == 'Upstream' else 'Ours'
    ran = Ran()
    with tempfile.TemporaryDirectory() as directory:
        module = Path(directory) / f'test_{suite.lower()}_{round(latency * 1000)}ms.py'
        module.write_text(MODULE.format(latency=latency, suite=suite, suite_base=base))
        (Path(directory) / 'pytest.ini').write_text('[pytest]\n')
        options = ['--conformance-profile', profile] if suite == 'Ours' else []
        started = time.perf_counter()
        pytest.main(
            [
                str(module),
                '-q',
                '--no-header',
                '-p',
                'no:cacheprovider',
                '-p',
                'no:randomly',
                '--rootdir',
                directory,
                '-c',
                str(Path(directory) / 'pytest.ini'),
                *options,
                *extra,
            ],
            plugins=[ran],
        )
        return time.perf_counter() - started, ran.count


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--latency', type=float, nargs='+', default=[0.0, 0.05, 0.2])
    parser.add_argument('--profile', default='ci', choices=['ci', 'certify', 'dev'])
    parser.add_argument('pytest_args', nargs='*')
    arguments = parser.parse_args()
    lines = []
    for latency in arguments.latency:
        upstream_wall, upstream = run('Upstream', latency, arguments.profile, [])
        ours_wall, ours = run('Ours', latency, arguments.profile, arguments.pytest_args)
        lines.append(
            f'latency {latency * 1000:4.0f} ms: upstream {upstream_wall:6.1f} s for {sum(upstream.values()):3} rules '
            f'({upstream["failed"]} failed); ours {ours_wall:6.1f} s for {sum(ours.values()):3} rules '
            f'({ours["failed"]} failed); ratio ours/upstream {ours_wall / upstream_wall:.2f}'
        )
    print()
    print('\n'.join(lines))
    return 0


if __name__ == '__main__':
    sys.exit(main())
