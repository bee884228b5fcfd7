"""An advisory (a failed `should` rule, or a claim not made) in every report format: listed, counted apart, never a
failure; the verdict is decided by the rules that bind, and `verify` refuses an advisory recorded on a `must` rule."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest

from workspace_conformance.reports.bundle import write_bundle_extras
from workspace_conformance.reports.diff import diff_reports
from workspace_conformance.reports.matrix import row_of
from workspace_conformance.reports.model import Report, RuleOutcome, SuiteReport, advisories, summarize, verdict_of
from workspace_conformance.reports.render import badge_json, badge_svg
from workspace_conformance.reports.render.html import render_html
from workspace_conformance.reports.render.junit import render_junit
from workspace_conformance.reports.render.markdown import render_markdown
from workspace_conformance.reports.render.terminal import write_summary
from workspace_conformance.reports.verify import CHECKSUMS, _report_problems, checksums, verify_bundle
from workspace_conformance.reports.write import write_all

from .runner import certify, report_of


def _outcome(rule_id: str, outcome: str, strength: str = 'must', **more: Any) -> RuleOutcome:
    return RuleOutcome.model_validate(
        {
            'rule_id': rule_id,
            'area': 'bounds',
            'level': 'core',
            'strength': strength,
            'clause': f'the clause of {rule_id}',
            'anyio_backend': 'asyncio',
            'outcome': outcome,
            **more,
        }
    )


def _report(*results: RuleOutcome) -> Report:
    summaries = summarize(results)
    suite = SuiteReport(
        subject='m.py::TestTools',
        anyio_backends=['asyncio'],
        results=list(results),
        rules=summaries,
        verdict=verdict_of(summaries),
    )
    return report_of(suite)


WHY = 'not claimed: the subject does not claim `bounded`'
ADVISED = _outcome(
    'huge_is_bounded',
    'advisory',
    'claim',
    reason=WHY,
    excerpt='[bounds/huge_is_bounded] contract: "the clause of huge_is_bounded"\nobserved: returned 1000000 characters',
    observed='returned 1000000 characters',
)
SHOULD = _outcome('marks_partial', 'advisory', 'should', reason='should: good practice', observed='no marker')
HELD = _outcome('no_host_writes', 'passed')
KEPT = _outcome('keeps_going', 'passed', 'should')


class _Writer:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def write_sep(self, sep: str, title: str | None = None, **markup: bool) -> None:
        self.lines.append(title or '')

    def write_line(self, line: str, **markup: bool) -> None:
        self.lines.append(line)


def _terminal(report: Report) -> list[str]:
    writer = _Writer()
    write_summary(writer, report)
    return writer.lines


def test_an_advisory_never_changes_the_verdict_and_a_must_failure_does() -> None:
    assert _report(HELD, ADVISED).verdict == 'certified'
    assert [summary.rule_id for summary in advisories(_report(HELD, ADVISED).suites[0].rules)] == ['huge_is_bounded']
    assert _report(HELD, ADVISED, _outcome('x', 'failed', excerpt='boom')).verdict == 'not certified'
    # a gap of a rule that only advises changes nothing; one of a core must rule fails the run
    gap = {'skip_kind': 'environment', 'reason': 'no ln'}
    assert _report(HELD, _outcome('y', 'skipped', 'should', **gap)).verdict == 'certified'
    assert _report(HELD, _outcome('y', 'skipped', 'must', **gap)).verdict == 'not certified'


def test_the_terminal_lists_each_advisory_after_the_failures_and_counts_them_apart() -> None:
    lines = _terminal(_report(HELD, KEPT, ADVISED, SHOULD, _outcome('x', 'failed', excerpt='[bounds/x] boom')))
    title = 'advisories (rules that do not bind here; never a failure):'
    assert lines.index('failures:') < lines.index(title)
    block = lines[lines.index(title) + 1 :]
    assert block[:3] == [
        f'  [bounds/huge_is_bounded] (core, claim) advisory on asyncio ({WHY})',
        '    contract: "the clause of huge_is_bounded"',
        '    observed: returned 1000000 characters',
    ]
    assert '  [bounds/marks_partial] (core, should) advisory on asyncio (should: good practice)' in block
    verdict = next(line for line in lines if line.startswith('verdict:'))
    assert verdict.startswith('verdict: not certified (2 passed, 1 failed, 0 broken, 2 advisories, 0 gaps')
    # the per-area table keeps its advisory column, after the failed and broken ones
    header = lines[1].split()
    assert header[header.index('advisory') - 2 : header.index('advisory')] == ['failed', 'broken']
    assert lines[2].split()[2:] == ['2', '1', '0', '2', '0', '0', '0']


def test_markdown_and_html_list_advisories_with_their_strength_and_why() -> None:
    report = _report(HELD, KEPT, ADVISED)
    markdown = render_markdown(report)
    assert '**1** advisory' in markdown and '## Failures' not in markdown
    assert markdown.index('## Advisories') < markdown.index('## m.py::TestTools')
    [row] = [line for line in markdown.splitlines() if line.startswith('| `bounds/huge_is_bounded`')]
    assert row.startswith(f'| `bounds/huge_is_bounded` | core | claim | {WHY} | the clause of huge_is_bounded | ')
    assert 'advisory on asyncio: returned 1000000 characters' in row
    html = render_html(report)
    assert '<option>advisory</option>' in html and '<span class="count-advisory"><b>1</b> advisory</span>' in html
    assert re.findall(r'<tr class="rule ([a-z-]+)"', html) == ['advisory', 'passed', 'passed']
    assert re.findall(r'data-strength="([a-z]+)"', html) == ['claim', 'must', 'should']
    assert '<th>strength</th>' in html
    assert 'advisory on asyncio: returned 1000000 characters' in html


def test_junit_says_an_advisory_is_a_skip_with_its_strength_never_a_failure() -> None:
    junit = ElementTree.fromstring(render_junit(_report(HELD, ADVISED)))
    [suite] = junit.findall('testsuite')
    assert (suite.get('failures'), suite.get('errors'), suite.get('skipped'), suite.get('tests')) == (
        '0',
        '0',
        '1',
        '2',
    )
    suite_properties = {p.get('name'): p.get('value') for p in suite.findall('properties/property')}
    assert suite_properties['advisories'] == '1' and suite_properties['verdict'] == 'certified'
    case = next(case for case in suite.findall('testcase') if case.get('name') == 'huge_is_bounded[asyncio]')
    [skipped] = case.findall('skipped')
    assert skipped.get('type') == 'advisory' and skipped.get('message') == f'advisory ({WHY})'
    assert skipped.text == 'returned 1000000 characters'
    properties = {p.get('name'): p.get('value') for p in case.findall('properties/property')}
    assert properties['strength'] == 'claim' and properties['outcome'] == 'advisory'
    assert not junit.findall('.//failure') and not junit.findall('.//error')


def test_the_badge_keeps_the_verdict_and_counts_no_advisory_as_a_failure() -> None:
    report = _report(HELD, KEPT, ADVISED, SHOULD)
    assert json.loads(badge_json(report))['message'] == 'certified (2/2, 2 advisories)'
    assert json.loads(badge_json(report))['color'] == 'success'
    assert 'certified (2/2, 2 advisories)' in badge_svg(report)
    assert json.loads(badge_json(_report(HELD)))['message'] == 'certified (1/1)'


def test_report_json_round_trips_the_strength_and_the_advisory() -> None:
    report = _report(HELD, ADVISED)
    loaded = Report.model_validate_json(report.model_dump_json())
    assert loaded == report and loaded.schema_version == 2
    [rule] = [rule for rule in loaded.suites[0].rules if rule.rule_id == 'huge_is_bounded']
    assert (rule.status, rule.strength) == ('advisory', 'claim')
    [result] = [result for result in loaded.suites[0].results if result.rule_id == 'huge_is_bounded']
    assert (result.outcome, result.reason, result.observed) == ('advisory', WHY, 'returned 1000000 characters')


def _bundle(directory: Path, report: Report) -> Path:
    write_all(report, directory)
    write_bundle_extras(directory, report, ['workspace-conformance', 'certify', '--tools', 'm:T'])
    return directory


def test_a_bundle_with_advisories_verifies_and_names_them(tmp_path: Path) -> None:
    # a made-up toolkit version: hashes and verdicts are checked, not this version's catalog
    report = _report(HELD, ADVISED).model_copy(update={'toolkit_version': '0.0.1'})
    bundle = _bundle(tmp_path / 'bundle', report)
    problems = verify_bundle(bundle)
    assert [problem for problem in problems if 'made by workspace-conformance' not in problem] == [], problems
    assert '1 advisory' in (bundle / 'REPRODUCE.md').read_text()
    assert '## Advisories' in (bundle / 'report.md').read_text()


def test_verify_refuses_an_advisory_on_a_must_rule_and_a_strength_that_is_not_the_catalogs(tmp_path: Path) -> None:
    hidden = _report(HELD, _outcome('no_host_writes', 'advisory', 'must', reason='should', observed='wrote'))
    problems = _report_problems(hidden, 'report.json')
    assert any('an advisory on asyncio, but it is a must rule' in problem for problem in problems), problems
    lowered = _report(_outcome('no_host_writes', 'advisory', 'should', reason='should', observed='wrote'))
    problems = _report_problems(lowered, 'report.json')
    assert any('recorded as should, but the catalog says must' in problem for problem in problems), problems
    # a bundle whose report turns a must failure into an advisory (hashes made again) is refused, one line for it
    report = _report(HELD, ADVISED).model_copy(update={'toolkit_version': '0.0.1'})
    bundle = _bundle(tmp_path / 'bundle', report)
    data = json.loads((bundle / 'report.json').read_text())
    for entry in (*data['suites'][0]['results'], *data['suites'][0]['rules']):
        if entry['rule_id'] == 'huge_is_bounded':
            entry['strength'] = 'must'
    (bundle / 'report.json').write_text(json.dumps(data))
    (bundle / CHECKSUMS).write_text(checksums(bundle))
    problems = verify_bundle(bundle)
    assert 'report.json: rule huge_is_bounded: an advisory on asyncio, but it is a must rule' in problems, problems
    assert not [problem for problem in problems if 'SHA-256' in problem], problems


def test_a_summary_whose_strength_was_edited_is_named(tmp_path: Path) -> None:
    report = _report(HELD, _outcome('gapped', 'skipped', 'must', skip_kind='environment', reason='no ln'))
    assert report.verdict == 'not certified'
    data = report.model_dump(mode='json')
    for rule in data['suites'][0]['rules']:
        if rule['rule_id'] == 'gapped':
            rule['strength'] = 'should'  # as if the gap did not bind...
    data['suites'][0]['verdict'] = data['verdict'] = 'certified'  # ...and the verdict followed
    problems = _report_problems(Report.model_validate(data), 'report.json')
    assert 'report.json: rule gapped: recorded as should, but its results say must' in problems, problems
    assert any("verdict 'certified' does not follow from its results" in problem for problem in problems), problems


def test_a_schema_1_report_reads_as_all_must() -> None:
    old = _report(HELD, _outcome('y', 'skipped', skip_kind='environment', reason='no ln')).model_dump(mode='json')
    old['schema_version'] = 1
    for key in ('results', 'rules'):
        for entry in old['suites'][0][key]:
            entry.pop('strength')
    loaded = Report.model_validate(old)
    assert {result.strength for result in loaded.suites[0].results} == {'must'}
    assert {rule.strength for rule in loaded.suites[0].rules} == {'must'}
    assert verdict_of(loaded.suites[0].rules) == 'not certified'  # its core gap still binds
    assert not [p for p in _report_problems(loaded, 'report.json') if 'must' in p or 'catalog says' in p]


def test_diff_calls_passed_to_advisory_a_change_and_advisory_to_failed_a_regression() -> None:
    passed, advised = _report(_outcome('huge_is_bounded', 'passed', 'claim')), _report(ADVISED)
    failed = _report(_outcome('huge_is_bounded', 'failed', 'claim', observed='returned 1000000 characters'))
    became = diff_reports(passed, advised)
    assert became.regressions == [] and became.fixes == []
    assert became.advisories == ['bounds/huge_is_bounded: passed -> advisory: returned 1000000 characters']
    assert became.lines() == ['advisory: bounds/huge_is_bounded: passed -> advisory: returned 1000000 characters']
    assert diff_reports(advised, passed).advisories == ['bounds/huge_is_bounded: advisory -> passed']
    worse = diff_reports(advised, failed)
    assert worse.regressions == ['bounds/huge_is_bounded: advisory -> failed: returned 1000000 characters']
    assert diff_reports(failed, advised).fixes == ['bounds/huge_is_bounded: failed -> advisory']


def test_a_matrix_row_counts_advisories_apart_from_the_area_fraction(tmp_path: Path) -> None:
    row = row_of(tmp_path, _report(HELD, KEPT, ADVISED))
    assert row.advisories == ('bounds/huge_is_bounded',)
    assert (row.areas['bounds'].passed, row.areas['bounds'].applicable) == (2, 2)


HUGE_READER = '''"""A capability whose read tool returns a file whole, however big: an advisory, never a failure."""
from dataclasses import dataclass
from typing import Any

from pydantic_ai import ModelRetry, RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.toolsets import FunctionToolset


async def read_file(ctx: RunContext, path: str) -> str:
    """Read a text file from the project, whole."""
    try:
        return await ctx.workspace.read_text(path)
    except FileNotFoundError:
        raise ModelRetry(f'{path} does not exist.')


@dataclass
class WholeReader(AbstractCapability[Any]):
    def get_toolset(self) -> FunctionToolset[Any]:
        return FunctionToolset([read_file])
'''


@pytest.mark.slow  # certifies a whole tool suite in its own process
def test_certify_of_a_tool_returning_a_huge_file_whole_is_certified_with_the_advisory_listed(tmp_path: Path) -> None:
    (tmp_path / 'whole_reader.py').write_text(HUGE_READER)
    bundle = tmp_path / 'bundle'
    ran = certify(tmp_path, '--tools', 'whole_reader:WholeReader', '--bundle', str(bundle))
    out = ran.stdout
    assert ran.returncode == 0 and 'workspace-conformance: certified (whole_reader:WholeReader)' in out, out[-3000:]
    lines = out.splitlines()
    header = next(line for line in lines if line.startswith('  [bounds/huge_output_is_bounded_and_marked]'))
    assert header.startswith('  [bounds/huge_output_is_bounded_and_marked] (core, claim) advisory on '), header
    assert 'not claimed' in header and 'unbounded' in out
    assert re.search(r'^verdict: certified \(\d+ passed, 0 failed, 0 broken, [1-9]\d* advisor', out, re.MULTILINE), out
    report = Report.model_validate_json((bundle / 'report.json').read_text())
    statuses = {rule.rule_id: (rule.status, rule.strength) for suite in report.suites for rule in suite.rules}
    assert statuses['huge_output_is_bounded_and_marked'] == ('advisory', 'claim'), statuses
    assert report.verdict == 'certified' and 'failed' not in {status for status, _ in statuses.values()}
    assert verify_bundle(bundle) == []
    junit = ElementTree.fromstring((bundle / 'junit.xml').read_text())
    assert not junit.findall('.//failure') and junit.findall('.//skipped[@type="advisory"]')
    shutil.rmtree(bundle)
