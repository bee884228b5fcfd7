"""The parity corpus: projects written against upstream's suite keep every pass when they swap in ours.

Each corpus module runs twice in a fresh directory, importing `WorkspaceBackendSuite` from pydantic-ai and then
from this toolkit (see `runner.py`). Every upstream test that passes with upstream's class must pass with ours on
every event loop it ran on, except the documented difference (`remove_refuses_the_working_dir_and_its_ancestors`
never runs on the shared `backend`) and the real defects a module lists in `DEFECTS`. A module's backend is taken to
be correct (certified or partial) unless the module says `CORRECT = False`.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from .runner import ModuleResult, collect_only, corpus_modules, module_source, run_module

REMOVE_REFUSES = 'remove_refuses_the_working_dir_and_its_ancestors'
FILES_ONLY = 'files_only_json_store'
SKIP_AND_REPLACE = 'skip_and_replace'
ASYNCIO_AT_MODULE_LEVEL = 'module_anyio_asyncio'


def _supplies_destructive(name: str) -> bool:
    return re.search(r'def (destructive|fresh)_backend\b', module_source(name)) is not None


def _rule_passes_where_upstream_does(result: ModuleResult) -> list[str]:
    problems = []
    ours_passed = result.ours.with_outcome('passed')
    for key, loops in sorted(result.upstream.with_outcome('passed').items()):
        name, params = key
        rule_id = name.removeprefix('test_')
        if rule_id == REMOVE_REFUSES or rule_id in result.defects:
            continue
        missing = loops - ours_passed.get(key, set())
        if missing:
            label = f'{rule_id}[{params}]' if params else rule_id
            problems.append(
                f'{label} passes with upstream on {sorted(loops)} but not with ours on {sorted(missing)}: '
                f'{result.ours.message(key)}'
            )
    return problems


def _check_remove_refuses(result: ModuleResult) -> list[str]:
    """Ours never asks the shared backend to remove its working dir: a gap, or a pass on a destructive fixture."""
    summary = result.ours.rule(REMOVE_REFUSES)
    if summary is None:
        return [f'{REMOVE_REFUSES} has no summary in our report']
    upstream_passed = any(name == f'test_{REMOVE_REFUSES}' for name, _ in result.upstream.with_outcome('passed'))
    if _supplies_destructive(result.name):
        if upstream_passed and summary.status != 'passed' and REMOVE_REFUSES not in result.defects:
            return [
                f'{REMOVE_REFUSES}: the module supplies a destructive fixture and upstream passes, but ours is '
                f'{summary.status}: {summary.detail}'
            ]
        return []
    if summary.status != 'gap' or summary.skip_kind != 'fixture-missing':
        return [
            f'{REMOVE_REFUSES}: without a destructive fixture ours must not run it on the shared backend, '
            f'but it is {summary.status} ({summary.skip_kind}): {summary.detail}'
        ]
    return []


def _stale_defects(result: ModuleResult) -> list[str]:
    ours_passed = {name.removeprefix('test_') for name, _ in result.ours.with_outcome('passed')}
    return [
        f'DEFECTS lists {rule_id}, which passes with ours: drop it'
        for rule_id in result.defects
        if rule_id in ours_passed
    ]


def _check_files_only(result: ModuleResult) -> list[str]:
    report = result.ours.report
    assert report is not None
    problems = [] if report.verdict == 'certified' else [f'the files-only backend is {report.verdict}, not certified']
    for suite in report.suites:
        for summary in suite.rules:
            if summary.area in ('commands', 'symlinks') and summary.status != 'not-applicable':
                problems.append(f'{summary.rule_id} is {summary.status}, not not-applicable: {summary.detail}')
            if summary.status == 'not-applicable' and not summary.detail:
                problems.append(f'{summary.rule_id} is not-applicable without a reason')
    return problems


def _check_skip_and_replace(result: ModuleResult) -> list[str]:
    report = result.ours.report
    assert report is not None
    problems = [] if report.verdict == 'partial' else [f'verdict {report.verdict}, not partial']
    output = result.ours.stdout
    expected = {
        'large_file_round_trip': r'SKIPPED .*\[files/large_file_round_trip\] overridden: .*slow on our CI',
        'stdin_is_at_eof': r'SKIPPED .*\[commands/stdin_is_at_eof\] overridden: replaced by the subclass',
    }
    for rule_id, line in expected.items():
        summary = result.ours.rule(rule_id)
        if summary is None or summary.skip_kind != 'overridden':
            problems.append(f'{rule_id} is {summary!r} in report.json, not skip_kind overridden')
        if not re.search(line, output):
            problems.append(f'`pytest -rs` has no line matching {line!r}')
        if f'[{summary.area if summary else "?"}/{rule_id}]' not in _summary_section(output):
            problems.append(f'the terminal summary does not list {rule_id} as overridden')
    if {test.name for test in result.ours.overridden} != {f'test_{rule_id}' for rule_id in expected}:
        problems.append(f'the [overridden] items are {sorted(test.name for test in result.ours.overridden)}')
    return problems


def _summary_section(output: str) -> str:
    """The overridden list of our terminal summary: from its heading to the verdict line."""
    start = output.find('\noverridden (')
    end = output.find('\nverdict:', start)
    return output[start:end] if 0 <= start < end else ''


def _check_asyncio_only_collection(result: ModuleResult) -> list[str]:
    items = [line for line in collect_only(result.name, 'ours').splitlines() if '::' in line]
    problems = [] if items else ['`pytest --collect-only -q` listed no items']
    trio = [line for line in items if 'trio' in line]
    return problems + ([f'{len(trio)} trio items collected, e.g. {trio[0]}'] if trio else [])


def _failed_rules(result: ModuleResult) -> list[str]:
    """The rules our report says failed."""
    report = result.ours.report
    assert report is not None
    return sorted(
        summary.rule_id for suite in report.suites for summary in suite.rules if summary.status in ('failed', 'broken')
    )


KNOWN_DISCREPANCIES: dict[str, tuple[str, str]] = {}
"""Module -> (pattern of the only problems it may have, why): an xfail until src/ is fixed, then a failure."""

SPECIFIC: dict[str, Callable[[ModuleResult], list[str]]] = {
    FILES_ONLY: _check_files_only,
    SKIP_AND_REPLACE: _check_skip_and_replace,
    ASYNCIO_AT_MODULE_LEVEL: _check_asyncio_only_collection,
}


def test_the_corpus_is_big_enough() -> None:
    assert len(corpus_modules()) >= 12
    assert set(SPECIFIC) <= set(corpus_modules())


@pytest.mark.parametrize('name', corpus_modules())
def test_swapping_the_import_keeps_every_pass(name: str) -> None:
    result = run_module(name)
    assert result.upstream.tests, f'the upstream run collected nothing:\n{result.upstream.stdout[-3000:]}'
    assert result.ours.report is not None, f'our run wrote no report.json:\n{result.ours.stdout[-3000:]}'
    problems = _rule_passes_where_upstream_does(result) + _check_remove_refuses(result) + _stale_defects(result)
    if result.upstream.loops() != result.ours.loops():
        problems.append(
            f'event loops: upstream ran {sorted(result.upstream.loops())}, ours {sorted(result.ours.loops())}'
        )
    if result.correct and result.upstream_only:  # upstream's rules alone: none of them may fail
        failed = _failed_rules(result)
        problems += [f'a correct backend failed {rule}: {result.ours.message(("test_" + rule, ""))}' for rule in failed]
    elif result.correct and result.verdict not in ('certified', 'partial'):
        problems.append(f'a correct backend got the verdict {result.verdict!r}')
    if name in SPECIFIC:
        problems += SPECIFIC[name](result)
    known = KNOWN_DISCREPANCIES.get(name)
    if known is not None:
        pattern, reason = known
        unknown = [problem for problem in problems if not re.search(pattern, problem)]
        assert problems, f'{name}: the known discrepancy is gone ({reason}): drop it from KNOWN_DISCREPANCIES'
        if not unknown:
            pytest.xfail(f'known discrepancy: {reason}')
        problems = unknown
    assert not problems, f'{name}:\n' + '\n'.join(f'- {problem}' for problem in problems)
