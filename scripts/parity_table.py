"""Run the parity corpus (tests/parity/corpus) with upstream's suite and with ours, and print a markdown table.

    python scripts/parity_table.py [-j JOBS] [NAME ...]

Columns: the corpus module, upstream's passed/failed/skipped tests, our passed/failed/gap/not-applicable/overridden
rules (from report.json), and our verdict. Runs `JOBS` modules at a time (default 2).
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.parity.runner import ModuleResult, corpus_modules, run_module


def _row(result: ModuleResult) -> str:
    upstream = result.upstream.counts()
    ours = result.ours.statuses()
    failed_upstream = upstream['failed'] + upstream['error']
    return (
        f'| {result.name} | {upstream["passed"]}/{failed_upstream}/{upstream["skipped"]} '
        f'| {ours["passed"]}/{ours["failed"]}/{ours["gap"]}/{ours["not-applicable"]}/{ours["overridden"]} '
        f'| {result.verdict} |'
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument('-j', '--jobs', type=int, default=2)
    parser.add_argument('names', nargs='*')
    args = parser.parse_args()
    names = [name for name in corpus_modules() if not args.names or name in args.names]
    started = time.monotonic()
    print('| module | upstream passed/failed/skipped | ours passed/failed/gap/not-applicable/overridden | verdict |')
    print('| --- | --- | --- | --- |')
    with ThreadPoolExecutor(args.jobs) as pool:
        for result in pool.map(run_module, names):
            print(_row(result), flush=True)
    print(f'\n{len(names)} modules in {time.monotonic() - started:.0f} s')


if __name__ == '__main__':
    main()
