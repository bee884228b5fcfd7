"""Run the mutant gate and print the mutation score: mutants killed / mutants, rules proven / rules.

As root it re-runs itself without CAP_DAC_OVERRIDE (util-linux `setpriv`), so that mutants of the permission
rule are judged too. Extra arguments go to pytest (e.g. `-n 2`).
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DROP = '-dac_override,-dac_read_search'
FLAG = 'WORKSPACE_CONFORMANCE_SCORE_UNPRIVILEGED'


class Outcomes:
    """Per mutant class, the outcome of each of its rules (xfailed means the mutant was caught)."""

    def __init__(self) -> None:
        self.by_mutant: dict[str, dict[str, str]] = defaultdict(dict)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        parts = report.nodeid.split('::')
        if len(parts) < 3 or not parts[1].startswith('TestMutant_'):
            return
        mutant, rule = parts[1].removeprefix('TestMutant_'), parts[2].split('[')[0].removeprefix('test_')
        if report.when == 'call' or report.outcome != 'passed':
            caught = report.skipped and hasattr(report, 'wasxfail')
            self.by_mutant[mutant][rule] = 'killed' if caught else report.outcome


def main() -> int:
    setpriv = shutil.which('setpriv')
    if os.geteuid() == 0 and setpriv and not os.environ.get(FLAG):
        os.execve(
            setpriv,
            [setpriv, '--bounding-set', DROP, '--inh-caps', DROP, sys.executable, *sys.argv],
            {**os.environ, FLAG: '1'},
        )
    sys.path.insert(0, str(ROOT))
    from tests.mutants.gallery import load_all

    from workspace_conformance import rules

    mutants = load_all()
    outcomes = Outcomes()
    started = time.monotonic()
    pytest.main(
        [
            str(ROOT / 'tests' / 'mutants' / 'test_gate.py'),
            '-q',
            '-p',
            'no:cacheprovider',
            '--no-header',
            '--rootdir',
            str(ROOT),
            *sys.argv[1:],
        ],
        plugins=[outcomes],
    )
    elapsed = time.monotonic() - started
    killed = [m for m in mutants if all(outcomes.by_mutant[m.name].get(r) == 'killed' for r in m.kills)]
    proven = {r for m in killed for r in m.kills if outcomes.by_mutant[m.name].get(r) == 'killed'}
    catalog = rules()
    for mutant in mutants:
        if mutant not in killed:
            print(f'survived: {mutant.name} {dict(outcomes.by_mutant[mutant.name])}')
    for rule in catalog:
        if rule.id not in proven:
            print(f'unproven: {rule.qualified}')
    print(f'mutants killed: {len(killed)} / {len(mutants)} ({100 * len(killed) / max(1, len(mutants)):.1f} %)')
    print(f'rules proven: {len(proven)} / {len(catalog)} ({100 * len(proven) / len(catalog):.1f} %)')
    print(f'gate wall time: {elapsed:.1f} s')
    return 0 if len(killed) == len(mutants) and len(proven) == len(catalog) else 1


if __name__ == '__main__':
    sys.exit(main())
