"""Certify every backend of the hostile gallery once, through the CLI, and print what each run took and left behind.

    python scripts/hostile_table.py [-j JOBS] [NAME ...]

Columns: the backend (and event loop), wall time, the bound computed from the rule catalog (tests/hostile/harness.py),
exit status, rules failed (and how many failures say what the backend did), results missing, and leftovers:
processes, paths. Runs `JOBS` certifications at a time (default 2).
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.hostile.gallery import GALLERY, Hostile
from tests.hostile.harness import Certification, certify_entry


def _row(entry: Hostile, run: Certification) -> str:
    failures = run.failures() if run.report else {}
    saying = sum(1 for text in failures.values() if re.search(entry.says, text))
    missing = run.outcomes().get('missing', 0) if run.report else 0
    report = 'no report' if run.report is None else ('complete' if run.report.complete else 'incomplete')
    return (
        f'{entry.id:<28} {run.wall:>7.1f} s {run.bound:>7.1f} s {run.returncode:>5} '
        f'{len(failures):>4} ({saying:>3} say it) {missing:>8} {report:<11} '
        f'{len(run.leftover_processes):>5} {len(run.leftover_paths):>5}'
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument('-j', '--jobs', type=int, default=2)
    parser.add_argument('-v', '--verbose', action='store_true', help='list leftovers and the other failures')
    parser.add_argument('names', nargs='*')
    args = parser.parse_args()
    entries = [entry for entry in GALLERY if not args.names or entry.id in args.names or entry.name in args.names]
    print(
        f'{"backend":<28} {"wall":>9} {"bound":>9} {"exit":>5} {"failed (say what it did)":>22} {"missing":>8} '
        f'{"report":<11} {"procs":>5} {"paths":>5}'
    )
    with tempfile.TemporaryDirectory(prefix='hostile-table-') as temporary, ThreadPoolExecutor(args.jobs) as pool:
        runs = pool.map(lambda entry: (entry, certify_entry(entry, Path(temporary))), entries)
        for entry, run in runs:
            print(_row(entry, run), flush=True)
            if args.verbose:
                _details(entry, run)


def _details(entry: Hostile, run: Certification) -> None:
    """The leftovers, and the failures that do not say what the backend did, one line each."""
    for leftover in [*run.leftover_processes, *run.leftover_paths]:
        print(f'    leftover: {leftover}')
    if run.report is None:
        print(f'    no report: {run.report_problem}')
        return
    for rule, text in run.failures().items():
        if not re.search(entry.says, text):
            print(f'    {rule}: {text.split("observed: ", 1)[-1][:300]!r}')


if __name__ == '__main__':
    main()
