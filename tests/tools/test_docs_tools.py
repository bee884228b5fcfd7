"""The Workspaces page's own example tools, and a careful notes toolset, certified through the front door.

Each module is copied into a project of its own and certified with `certify --tools module:Class`, as its author
would. The contract asks no bound of a tool and makes the working directory a starting point, not a boundary, so the
page's `read_source` returning a 1 MB file whole, or following a symlink out, is an advisory, never a failure; a
search tool that needs commands and says so where they are missing or refused is a tool that does not fit there,
never a difference.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from workspace_conformance.reports.model import Report

from ..runner import certify

HERE = Path(__file__).resolve().parent
pytestmark = pytest.mark.slow  # each certifies a whole tool suite in its own process


def _certified(tmp_path: Path, module: str, *options: str) -> tuple[str, Report]:
    """`certify --tools module:Class` in a project holding only `module`: its terminal output and report."""
    shutil.copy(HERE / f'{module}.py', tmp_path / f'{module}.py')
    factory = {'docs_tools': 'DocsTools', 'careful_notes': 'CarefulNotes'}[module]
    ran = certify(tmp_path, '--tools', f'{module}:{factory}', '--report', str(tmp_path / 'out'), *options)
    assert 'Traceback' not in ran.stdout + ran.stderr, ran
    report = Report.model_validate_json((tmp_path / 'out' / 'report.json').read_text())
    return ran.stdout, report


def _statuses(report: Report) -> dict[str, str]:
    return {summary.rule_id: summary.status for suite in report.suites for summary in suite.rules}


def test_the_pages_example_tools_are_certified_with_their_advisories(tmp_path: Path) -> None:
    out, report = _certified(tmp_path, 'docs_tools')
    assert report.verdict == 'certified', out
    statuses = _statuses(report)
    advised = sorted(rule for rule, status in statuses.items() if status == 'advisory')
    # the page's tools do not check ctx.workspace.attached in before_run, which the page suggests but does not require
    expected = [
        'fails_at_the_start_without_a_workspace',
        'huge_output_is_bounded_and_marked',
        'symlinks_do_not_lead_out',
    ]
    assert advised == expected, statuses
    assert 'failed' not in statuses.values()
    # the terminal lists each advisory with what was seen, and counts them apart from the passes
    assert '[bounds/huge_output_is_bounded_and_marked]' in out and 'unbounded' in out, out
    assert '[containment/symlinks_do_not_lead_out]' in out and 'returned the outside file' in out, out
    assert 'not claimed' in out, out
    assert 'workspace-conformance: certified (docs_tools:DocsTools)' in out


def test_claiming_what_the_pages_tools_do_not_keep_fails_them(tmp_path: Path) -> None:
    out, report = _certified(tmp_path, 'docs_tools', '--claims', 'bounded,contained')
    assert report.verdict == 'not certified', out
    failed = sorted(rule for rule, status in _statuses(report).items() if status in ('failed', 'broken'))
    assert failed == ['huge_output_is_bounded_and_marked', 'symlinks_do_not_lead_out'], out


def test_a_careful_notes_toolset_is_certified_with_no_advisory_about_fit(tmp_path: Path) -> None:
    out, report = _certified(tmp_path, 'careful_notes', '--claims', 'bounded')
    assert report.verdict == 'certified', out
    statuses = _statuses(report)
    assert statuses['same_results_everywhere'] == 'passed', out
    assert statuses['reads_work_read_only'] == 'passed', out
    assert statuses['huge_output_is_bounded_and_marked'] == 'passed', out  # claimed, and kept
    # it reads through symlinks as ctx.workspace does and claims no boundary: the one advisory, and not about fit
    assert [rule for rule, status in statuses.items() if status == 'advisory'] == ['symlinks_do_not_lead_out'], out
