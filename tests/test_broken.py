"""`broken`: a failure that only echoes a more basic rule's failure is reported as that, pointing at it.

The model's tests build outcomes by hand; the last test certifies a vendor's backend whose every write fails, through
the command line, and reads `broken` in every format the run writes.
"""

from __future__ import annotations

import json
import re
import shutil
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import Any

import pytest

from workspace_conformance.engine._rules import rule
from workspace_conformance.reports.model import RuleOutcome, summarize, verdict_of

from .runner import QUICK_CERTIFY, certify

GROUND = 'bytes_round_trip_and_write_creates_parents'
VENDOR_MODULE = Path(__file__).resolve().parent / 'first_contact' / 'quota_disk.py'


def _outcome(rule_id: str, outcome: str = 'failed', loop: str = 'asyncio', **extra: Any) -> RuleOutcome:
    fields = {'rule_id': rule_id, 'area': 'files', 'level': 'core', 'strength': 'must', 'anyio_backend': loop}
    return RuleOutcome.model_validate({'clause': f'The {rule_id} clause.', 'outcome': outcome, **fields, **extra})


def _statuses(*outcomes: RuleOutcome) -> dict[str, tuple[str, str | None]]:
    return {summary.rule_id: (summary.status, summary.broken_by) for summary in summarize(outcomes)}


def test_a_failure_on_the_operation_its_grounding_rule_failed_on_is_broken_by_that_rule() -> None:
    ground = _outcome(GROUND, raised_by='write_bytes', grounds=['write_bytes', 'read_bytes'])
    echo = _outcome('exists', raised_by='write_bytes', observed='raised OSError: quota')
    own = _outcome('stat_and_list_dir', observed='stat gave size 3, expected 4')  # its own finding: no operation
    other = _outcome('remove_deletes_a_file_or_a_tree', raised_by='remove')  # no rule grounds `remove` here
    statuses = _statuses(ground, echo, own, other)
    assert statuses == {
        GROUND: ('failed', None),
        'exists': ('broken', GROUND),
        'stat_and_list_dir': ('failed', None),
        'remove_deletes_a_file_or_a_tree': ('failed', None),
    }
    (summary,) = [summary for summary in summarize([ground, echo]) if summary.rule_id == 'exists']
    assert summary.detail is not None and summary.detail.startswith(
        f'broken by {GROUND} on asyncio: backend.write_bytes'
    )
    assert 'raised OSError: quota' in summary.detail
    assert verdict_of(summarize([ground, echo])) == 'not certified'


def test_a_failure_is_not_broken_when_its_grounding_rule_passed_or_failed_otherwise() -> None:
    echo = _outcome('exists', raised_by='write_bytes')
    passed = _outcome(GROUND, 'passed', grounds=['write_bytes'])
    assert _statuses(passed, echo)['exists'] == ('failed', None)  # a write error the basic rule did not meet
    content = _outcome(GROUND, grounds=['write_bytes'], observed='read back 3 bytes of 4')
    assert _statuses(content, echo)['exists'] == ('failed', None)  # it failed, but not on an error of write_bytes
    reads = _outcome(GROUND, grounds=['write_bytes', 'read_bytes'], raised_by='read_bytes')
    assert _statuses(reads, echo)['exists'] == ('failed', None)  # it failed on the other operation it grounds
    waived = _outcome(GROUND, 'xfailed', grounds=['write_bytes'], raised_by='write_bytes')
    assert _statuses(waived, echo)['exists'] == ('failed', None)  # an expected failure is not a cause found here


def test_broken_is_per_event_loop_and_the_worst_loop_decides() -> None:
    ground = _outcome(GROUND, raised_by='write_bytes', grounds=['write_bytes'])  # fails on asyncio only
    ground_trio = _outcome(GROUND, 'passed', 'trio', grounds=['write_bytes'])
    echo = _outcome('exists', raised_by='write_bytes')
    echo_trio = _outcome('exists', 'failed', 'trio', raised_by='write_bytes')
    assert _statuses(ground, ground_trio, echo, echo_trio)['exists'] == ('failed', None)
    passed_trio = _outcome('exists', 'passed', 'trio')
    assert _statuses(ground, ground_trio, echo, passed_trio)['exists'] == ('broken', GROUND)


def test_an_echo_of_an_echo_points_at_the_first_cause_and_an_advisory_can_be_one() -> None:
    make_dir = _outcome('make_dir_creates_parents_and_is_idempotent', raised_by='make_dir', grounds=['make_dir'])
    # The write rule could not make its scratch directory: it ended on make_dir, which another rule grounds.
    write = _outcome(GROUND, raised_by='make_dir', grounds=['write_bytes'])
    echo = _outcome('exists', raised_by='write_bytes')
    advisory = _outcome('reading_after_remove_raises_file_not_found', 'advisory', raised_by='make_dir')
    statuses = _statuses(make_dir, write, echo, advisory)
    assert statuses[GROUND] == ('broken', 'make_dir_creates_parents_and_is_idempotent')
    assert statuses['exists'] == ('broken', 'make_dir_creates_parents_and_is_idempotent')
    assert statuses['reading_after_remove_raises_file_not_found'] == (
        'broken',
        'make_dir_creates_parents_and_is_idempotent',
    )
    assert statuses['make_dir_creates_parents_and_is_idempotent'] == ('failed', None)


@pytest.mark.parametrize(
    ('options', 'says'),
    [
        ({'must': 'B33', 'grounds': ('write_file',)}, 'must be backend operations'),
        ({'must': 'B33', 'grounds': 'write_bytes'}, 'must be backend operations'),
        ({'grounds': ('write_bytes',)}, 'without must='),
    ],
)
def test_a_wrong_grounds_fails_where_the_rule_is_declared(options: dict[str, Any], says: str) -> None:
    with pytest.raises(ValueError, match=says):
        rule(area='files', **options)


def _broken_rules(report: dict[str, Any]) -> dict[str, str]:
    (suite,) = report['suites']
    return {summary['rule_id']: summary['broken_by'] for summary in suite['rules'] if summary['status'] == 'broken'}


@pytest.mark.slow  # a whole-suite certification
@pytest.mark.skipif(not shutil.which('sh'), reason='LocalWorkspaceBackend runs commands with sh')
def test_a_backend_whose_every_write_fails_shows_one_failure_and_the_rules_it_broke_in_every_format(
    tmp_path: Path,
) -> None:
    project = tmp_path / 'vendor'
    project.mkdir()
    shutil.copy(VENDOR_MODULE, project / 'quota_disk.py')
    out = tmp_path / 'report'
    result = certify(project, 'quota_disk:build', *QUICK_CERTIFY, '--report', str(out))
    printed = result.stdout + result.stderr
    assert result.returncode == 1, printed[-3000:]
    report = json.loads((out / 'report.json').read_text())
    (suite,) = report['suites']
    failed = [summary['rule_id'] for summary in suite['rules'] if summary['status'] == 'failed']
    assert failed == [GROUND], printed[-3000:]
    broken = _broken_rules(report)
    assert len(broken) >= 40 and set(broken.values()) == {GROUND}, broken
    assert report['verdict'] == 'not certified'
    # The commands rules never write a file: they pass, and are not called broken.
    statuses = {summary['rule_id']: summary['status'] for summary in suite['rules']}
    assert statuses['result_reports_exit_code_stdout_and_stderr'] == 'passed'

    # The terminal: one failure block, then the broken rules listed under their cause, and counted in the verdict.
    assert f'broken by [files/{GROUND}]: {len(broken)} rules' in result.stdout
    assert f', 1 failed, {len(broken)} broken,' in result.stdout
    assert sum(f'[files/{rule_id}]' in line for line in result.stdout.splitlines() for rule_id in broken) == 0
    # Markdown: a Broken section, a row per broken rule naming its cause.
    markdown = (out / 'report.md').read_text()
    assert f'**{len(broken)}** broken' in markdown and '## Broken' in markdown
    assert markdown.count(f'| `{GROUND}` |') == len(broken)
    # HTML: each broken rule's row has the status, and the filter offers it.
    html = (out / 'report.html').read_text()
    assert html.count('data-status="broken"') == len(broken)
    assert '<option>broken</option>' in html
    # JUnit: an error of type broken per broken rule, not a failure; one failure in all.
    tree = ElementTree.parse(out / 'junit.xml')
    (testsuite,) = tree.getroot()
    assert testsuite.get('failures') == '1'
    errors = [case for case in testsuite.iter('testcase') if case.find('error[@type="broken"]') is not None]
    assert len(errors) == len(broken)
    properties = {p.get('name'): p.get('value') for p in testsuite.find('properties') or []}
    assert properties['broken'] == str(len(broken))
    # The badges count them after the fraction.
    badge = json.loads((out / 'badge.json').read_text())
    assert re.fullmatch(rf'not certified \(\d+/\d+, {len(broken)} broken\)', badge['message']), badge
    assert f'{len(broken)} broken' in (out / 'badge.svg').read_text()
