"""Reports as users meet them: every format written, xdist-safe, interrupted runs, gaps, bundles, diffs, secrets."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from workspace_conformance.reports.diff import diff_reports
from workspace_conformance.reports.model import Report, RuleOutcome, SuiteReport, summarize, verdict_of
from workspace_conformance.reports.redact import REDACTED, Redactor
from workspace_conformance.reports.render import render_html, render_markdown
from workspace_conformance.reports.render._evidence import ELLIPSIS, shorten

from .runner import QUICK_CERTIFY, report_of

SUITE = """
import os

import pytest
from pydantic_ai.workspaces import LocalWorkspaceBackend
from workspace_conformance import WorkspaceBackendSuite
from workspace_conformance.suite import narrow

KEEP = {'test_exists', 'test_env_is_added', 'test_background_child_does_not_hold_up_completed_command',
        'test_stat_and_list_dir', 'test_a_missing_program_exits_127'}


class Leaky(LocalWorkspaceBackend):
    async def exists(self, path):
        if os.environ.get('INTERRUPT'):
            raise KeyboardInterrupt  # Ctrl-C in the middle of the run
        if os.environ.get('UNDECODABLE'):
            raise RuntimeError('provider refused the name caf\\udce9')  # a lone surrogate, as os.fsdecode gives
        raise RuntimeError('provider refused: api_key=' + os.environ.get('FAKE_PROVIDER_API_KEY', ''))


class TestSubject(WorkspaceBackendSuite):
    @pytest.fixture(scope='class')
    @classmethod
    def backend(cls, tmp_path_factory):
        kind = Leaky if os.environ.get('LEAKY') else LocalWorkspaceBackend
        return kind(tmp_path_factory.mktemp('ws'))

    @pytest.fixture
    def declared_limits(self):
        return {'background_child_does_not_hold_up_completed_command': 'the SDK waits for pipe EOF'}


if os.environ.get('FEW_RULES'):
    narrow(TestSubject, {name.removeprefix('test_') for name in KEEP})
"""
FAKE_KEY = 'sk-test-0123456789abcdefSECRET'


@pytest.fixture(autouse=True)
def _few_rules(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> None:
    if 'all_rules' not in request.keywords:
        monkeypatch.setenv('FEW_RULES', '1')


def _run(pytester: pytest.Pytester, out: Path, *args: str) -> pytest.RunResult:
    pytester.makepyfile(test_subject=SUITE)
    return pytester.runpytest_subprocess('-p', 'no:cacheprovider', '--conformance-report', str(out), *args)


PLAIN_RUN = 'reports_plain_run'
"""The xdist group of the tests that read `plain_run`: on one worker, the module fixture runs once."""


@dataclass(frozen=True)
class PlainRun:
    """A finished run: where its reports are, and what it printed."""

    out: Path
    stdout: str


@pytest.fixture(scope='module')
def plain_run(tmp_path_factory: pytest.TempPathFactory) -> PlainRun:
    """One serial run of the five rules on the plain local backend (one declared limit), shared by the tests that
    read it and change nothing in it (the same run `_run` gives, without LEAKY or extra options)."""
    root = tmp_path_factory.mktemp('plain')
    (root / 'test_subject.py').write_text(SUITE)
    out = root / 'out'
    environment = {key: value for key, value in os.environ.items() if key != 'PYTEST_ADDOPTS'}
    finished = subprocess.run(
        [sys.executable, '-m', 'pytest', '-p', 'no:cacheprovider', '--conformance-report', str(out)],
        cwd=root,
        env={**environment, 'FEW_RULES': '1'},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert (out / 'report.json').is_file(), finished.stdout[-2000:] + finished.stderr[-2000:]
    return PlainRun(out, finished.stdout)


def _outcomes(out: Path) -> set[tuple[str, str, str]]:
    report = Report.model_validate_json((out / 'report.json').read_text())
    return {(r.rule_id, r.anyio_backend, r.outcome) for suite in report.suites for r in suite.results}


@pytest.mark.xdist_group(PLAIN_RUN)
def test_every_format_is_written(plain_run: PlainRun) -> None:
    names = sorted(path.name for path in plain_run.out.iterdir())
    assert names == ['badge.json', 'badge.svg', 'junit.xml', 'report.html', 'report.json', 'report.md']
    badge = json.loads((plain_run.out / 'badge.json').read_text())
    assert badge['schemaVersion'] == 1 and badge['label'] == 'workspace conformance'
    junit = (plain_run.out / 'junit.xml').read_text()
    assert 'name="outcome" value="skipped"' in junit and 'name="skip_kind" value="declared-limit"' in junit


@pytest.mark.slow  # a whole-suite run
@pytest.mark.xdist_group(PLAIN_RUN)
def test_serial_and_two_workers_record_the_same_outcomes(
    pytester: pytest.Pytester, tmp_path: Path, plain_run: PlainRun
) -> None:
    _run(pytester, tmp_path / 'parallel', '-n', '2')
    serial, parallel = _outcomes(plain_run.out), _outcomes(tmp_path / 'parallel')
    assert serial == parallel
    assert len(serial) == 10  # five rules on asyncio and trio


@pytest.mark.slow  # a whole-suite run
def test_a_failure_naming_undecodable_bytes_reaches_the_report_from_a_worker(
    pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv('LEAKY', '1')
    monkeypatch.setenv('UNDECODABLE', '1')
    result = _run(pytester, tmp_path / 'out', '-n', '2')
    assert 'INTERNALERROR' not in result.stdout.str() + result.stderr.str()
    report = Report.model_validate_json((tmp_path / 'out' / 'report.json').read_text())
    assert report.complete and report.verdict == 'not certified'
    failed = [r for suite in report.suites for r in suite.results if r.outcome == 'failed']
    assert failed and all('caf\\udce9' in (r.excerpt or '') for r in failed if r.rule_id == 'exists'), failed
    # What was observed travels as data apart from the rule and clause that frame it, and report.md shows it once.
    exists = [r for r in failed if r.rule_id == 'exists']
    assert exists and all(r.observed and r.observed.startswith('raised RuntimeError') for r in exists), exists
    row = next(line for line in (tmp_path / 'out' / 'report.md').read_text().splitlines() if '/exists`' in line)
    assert row.count(exists[0].clause) == 1 and 'contract:' not in row and 'on asyncio, trio: raised' in row, row


@pytest.mark.xdist_group(PLAIN_RUN)
def test_a_declared_limit_makes_the_run_partial_and_its_reason_shows_everywhere(plain_run: PlainRun) -> None:
    """A declared limit makes a run `partial` and its reason shows in the terminal, report.md and report.html.

    On the five rules the other tests here run (the limited one among them): that the rest of the suite passes on
    the local backend is test_cli's and test_self_certification's to prove.
    """
    out = plain_run.out
    reason = 'the SDK waits for pipe EOF'
    pytest.LineMatcher(plain_run.stdout.splitlines()).fnmatch_lines(
        [f'*background_child_does_not_hold_up_completed_command*declared-limit: {reason}*']
    )
    report = Report.model_validate_json((out / 'report.json').read_text())
    assert report.verdict == 'partial' and report.complete
    gaps = {rule.rule_id for suite in report.suites for rule in suite.rules if rule.status != 'passed'}
    assert gaps == {'background_child_does_not_hold_up_completed_command'}, gaps  # the limit alone makes it partial
    assert reason in (out / 'report.md').read_text()
    assert reason in (out / 'report.html').read_text()


@pytest.mark.slow  # a whole-suite run
def test_an_interrupted_run_still_writes_an_incomplete_report(
    pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv('LEAKY', '1')
    monkeypatch.setenv('INTERRUPT', '1')
    out = tmp_path / 'out'
    result = _run(pytester, out)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    report = Report.model_validate_json((out / 'report.json').read_text())
    assert report.complete is False and report.verdict == 'not certified'
    assert any(result.outcome == 'missing' for suite in report.suites for result in suite.results)


@pytest.mark.slow  # a whole-suite run
def test_bundle_verifies_and_a_changed_outcome_is_named(tmp_path: Path) -> None:
    bundle = tmp_path / 'bundle'
    result = subprocess.run(
        [
            sys.executable,
            '-m',
            'workspace_conformance',
            'certify',
            '--bundle',
            str(bundle),
            '-k',
            'test_exists and not below and not working_dir',
            *QUICK_CERTIFY,
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=600,
    )
    assert result.returncode == 1, result.stdout[-2000:]  # narrowed with -k: incomplete, never certified
    for name in ('environment.json', 'REPRODUCE.md', 'SHA256SUMS', 'report.json', 'report.html'):
        assert (bundle / name).is_file(), name
    verify = subprocess.run(
        [sys.executable, '-m', 'workspace_conformance', 'verify', str(bundle)], capture_output=True, text=True
    )
    assert verify.returncode == 1 and 'report.json: rule env_is_added: no result on asyncio' in verify.stdout
    data = json.loads((bundle / 'report.json').read_text())
    passed = next(r for r in data['suites'][0]['results'] if r['outcome'] == 'passed')
    passed['outcome'] = 'failed'
    (bundle / 'report.json').write_text(json.dumps(data))
    tampered = subprocess.run(
        [sys.executable, '-m', 'workspace_conformance', 'verify', str(bundle)], capture_output=True, text=True
    )
    assert tampered.returncode == 1
    assert 'report.json: its SHA-256 does not match SHA256SUMS' in tampered.stdout
    assert f'report.json: rule {passed["rule_id"]}: recorded as passed, but its results say failed' in tampered.stdout


@pytest.mark.xdist_group(PLAIN_RUN)
def test_diff_names_regressions_and_exits_1(tmp_path: Path, plain_run: PlainRun) -> None:
    """`diff` names a rule that went from passed to failed and exits 1; the other way round, a fix, exits 0.

    Both sides are copies of one run, one edited: that two runs of one backend give the same outcomes is
    test_serial_and_two_workers_record_the_same_outcomes's to prove.
    """
    (tmp_path / 'good').mkdir()
    (tmp_path / 'bad').mkdir()
    good = json.loads((plain_run.out / 'report.json').read_text())
    bad = json.loads((plain_run.out / 'report.json').read_text())
    rule = next(r for r in bad['suites'][0]['rules'] if r['status'] == 'passed')
    rule['status'], rule['detail'] = 'failed', 'it broke'
    (tmp_path / 'bad' / 'report.json').write_text(json.dumps(bad))
    (tmp_path / 'good' / 'report.json').write_text(json.dumps(good))
    command = [sys.executable, '-m', 'workspace_conformance', 'diff']
    result = subprocess.run(
        [*command, str(tmp_path / 'good' / 'report.json'), str(tmp_path / 'bad' / 'report.json')],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 1 and f'regression: {rule["area"]}/{rule["rule_id"]}: passed -> failed' in result.stdout
    fixed = subprocess.run(
        [*command, str(tmp_path / 'bad' / 'report.json'), str(tmp_path / 'good' / 'report.json')],
        capture_output=True,
        text=True,
    )
    assert fixed.returncode == 0 and 'fixed:' in fixed.stdout


def test_secrets_never_reach_a_report_or_the_terminal(
    pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / 'out'
    pytester.makepyfile(test_subject=SUITE)
    monkeypatch.setenv('FAKE_PROVIDER_API_KEY', FAKE_KEY)
    monkeypatch.setenv('LEAKY', '1')
    result = pytester.runpytest_subprocess('-p', 'no:cacheprovider', '--conformance-report', str(out))
    assert 'provider refused' in (out / 'report.json').read_text()  # the failure is reported...
    formats = sorted(path.name for path in out.iterdir())
    assert formats == ['badge.json', 'badge.svg', 'junit.xml', 'report.html', 'report.json', 'report.md']
    for path in out.iterdir():
        assert FAKE_KEY not in path.read_text(), path.name  # ...without the key, in any format
    assert FAKE_KEY not in result.stdout.str() + result.stderr.str()


def test_redactor_keeps_paths_and_removes_credentials() -> None:
    redact = Redactor({'HOME': '/root', 'E2B_API_KEY': 'e2b_abcdefghijklmnop1234', 'SHORT': 'abc'})
    assert redact('cd /root && e2b_abcdefghijklmnop1234') == f'cd /root && {REDACTED}'
    assert redact('Authorization: Bearer abcdefghijklmnopqrstu') == f'Authorization: {REDACTED}'
    assert redact('token=hunter2hunter2') == REDACTED
    assert redact('abc') == 'abc'


def test_the_published_schema_is_current() -> None:
    script = Path(__file__).resolve().parent.parent / 'scripts' / 'generate_docs.py'
    result = subprocess.run([sys.executable, str(script), '--check'], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout


CLAUSE = 'A command killed by a signal in a live environment returns exit code 128 plus the signal number.'
SENTENCE = (
    "a shell killing itself with SIGTERM gave exit -15, stdout 'before-TERM', stderr '"
    + 'which n | ' * 60
    + "', expected exit 143"
)


def _outcome(rule_id: str, outcome: str, loop: str = 'asyncio', **extra: str) -> RuleOutcome:
    area = 'commands' if rule_id.startswith('death') else 'files'
    fields = {'rule_id': rule_id, 'area': area, 'level': 'core', 'anyio_backend': loop, 'outcome': outcome}
    return RuleOutcome.model_validate(
        {'clause': CLAUSE if area == 'commands' else f'The {rule_id} clause.', **fields, **extra}
    )


def _made(*results: RuleOutcome, loops: tuple[str, ...] = ('asyncio', 'trio')) -> Report:
    rules = summarize(results)
    suite = SuiteReport(
        subject='t.py::TestX', anyio_backends=list(loops), results=list(results), rules=rules, verdict=verdict_of(rules)
    )
    return report_of(suite)


def _signal_failure(observed: str) -> Report:
    framed = f'[commands/death_by_signal] contract: "{CLAUSE}"\nobserved: {observed}'
    return _made(
        _outcome('a_gap', 'skipped', skip_kind='declared-limit', reason='the SDK waits for pipe EOF'),
        _outcome('passes', 'passed'),
        *(
            _outcome('death_by_signal', 'failed', loop, excerpt=framed, observed=observed)
            for loop in ('asyncio', 'trio')
        ),
    )


def _failure_row(markdown: str) -> str:
    return next(line for line in markdown.splitlines() if line.startswith('| `commands/death_by_signal`'))


def test_markdown_keeps_the_observed_sentence_whole_and_cuts_only_at_a_word_boundary() -> None:
    observed = SENTENCE + "\nassert (-15, 'before-TERM') == (143, 'before-TERM')\n" + 'trailing words ' * 100
    row = _failure_row(render_markdown(_signal_failure(observed)))
    cell = row.split(' | ')[-1].removesuffix(' |')
    assert SENTENCE.replace('|', '\\|') in cell  # the whole sentence, "... expected exit 143" included
    assert cell.endswith(f' {ELLIPSIS}')
    kept = cell.removeprefix('failed on asyncio, trio: ').removesuffix(f' {ELLIPSIS}')
    kept = kept.replace('<br>', '\n').replace('\\|', '|')
    assert observed.startswith(kept) and observed[len(kept)] == ' ', kept[-40:]  # cut between two words


def test_a_sentence_longer_than_the_cap_keeps_its_start_and_its_end() -> None:
    sentence = 'the stderr read ' + 'word ' * 400 + 'and expected exit 143'
    kept = shorten(sentence, 1000)
    assert len(kept) <= 1002 and kept.startswith('the stderr read word') and kept.endswith('expected exit 143')
    head, tail = kept.split(f' {ELLIPSIS} ')
    assert sentence.startswith(head) and sentence.endswith(tail) and sentence[len(head)] == ' '
    token = 'x' * 3000  # one token longer than the cap has no word boundary: it is cut inside
    assert shorten(token, 1000).startswith('x' * 600) and len(shorten(token, 1000)) <= 1003


def test_failures_come_before_gaps_and_suite_tables_in_markdown_and_html() -> None:
    report = _signal_failure(SENTENCE)
    markdown = render_markdown(report)
    assert markdown.index('## Failures') < markdown.index('## Gaps') < markdown.index('| area | level |')
    statuses = re.findall(r'<tr class="rule ([a-z-]+)"', render_html(report))
    assert statuses == ['failed', 'gap', 'passed']


def test_evidence_shows_the_clause_once_and_names_every_loop_it_failed_on() -> None:
    report = _signal_failure(SENTENCE)
    row = _failure_row(render_markdown(report))
    assert row.count(CLAUSE) == 1 and 'contract:' not in row and '[commands/death_by_signal]' not in row
    assert f'failed on asyncio, trio: {SENTENCE[:40]}' in row  # identical on both loops: one observation
    html = render_html(report)
    html_row = html[html.index('<tr class="rule failed"') : html.index('</tr>', html.index('<tr class="rule failed"'))]
    assert html_row.count(CLAUSE) == 1 and 'contract:' not in html_row and 'expected exit 143' in html_row


def _loops_report(outcomes: dict[str, dict[str, str]], **versions: str) -> Report:
    """A report of rules (id -> loop -> outcome) on the loops they name, with `versions` replacing the defaults."""
    results = [
        _outcome(rule_id, outcome, loop, observed=f'{rule_id} broke on {loop}')
        if outcome == 'failed'
        else _outcome(rule_id, outcome, loop)
        for rule_id, by_loop in outcomes.items()
        for loop, outcome in by_loop.items()
    ]
    loops = tuple(sorted({loop for by_loop in outcomes.values() for loop in by_loop}))
    return _made(*results, loops=loops).model_copy(update=versions)


def test_diff_across_loop_sets_counts_as_fixed_only_what_changed_on_loops_both_ran() -> None:
    both = {'asyncio': 'passed', 'trio': 'failed'}
    old = _loops_report(
        {
            'trio_only': both,
            'everywhere': {'asyncio': 'failed', 'trio': 'failed'},
            'breaks': {'asyncio': 'passed', 'trio': 'passed'},
        }
    )
    new = _loops_report(
        {'trio_only': {'asyncio': 'passed'}, 'everywhere': {'asyncio': 'passed'}, 'breaks': {'asyncio': 'failed'}}
    )
    changes = diff_reports(old, new)
    assert changes.context == [
        'event loops: asyncio, trio -> asyncio (1 rule failed only on trio, which the new run did not run: not fixed)'
    ]
    assert changes.fixes == ['files/everywhere: failed -> passed']  # not trio_only: trio was not run
    assert changes.regressions == ['files/breaks: passed -> failed: breaks broke on asyncio']


def test_diff_calls_a_failure_on_a_loop_only_the_new_run_ran_a_regression() -> None:
    old = _loops_report({'fine': {'asyncio': 'passed'}})
    new = _loops_report({'fine': {'asyncio': 'passed', 'trio': 'failed'}})
    changes = diff_reports(old, new)
    assert changes.context == ['event loops: asyncio -> asyncio, trio']
    assert changes.regressions == [
        'files/fine: passed -> failed on trio, which the old run did not run: fine broke on trio'
    ]


def test_diff_names_the_catalog_and_versions_first_and_exits_1_on_a_regression(tmp_path: Path) -> None:
    old = _loops_report({'kept': {'asyncio': 'passed'}, 'dropped': {'asyncio': 'passed'}})
    new = _loops_report(
        {'kept': {'asyncio': 'failed'}, 'added_one': {'asyncio': 'passed'}, 'added_two': {'asyncio': 'passed'}},
        toolkit_version='0.3.0',
        pydantic_ai_version='1.1',
    )
    (tmp_path / 'old.json').write_text(old.model_dump_json())
    (tmp_path / 'new.json').write_text(new.model_dump_json())
    result = subprocess.run(
        [sys.executable, '-m', 'workspace_conformance', 'diff', str(tmp_path / 'old.json'), str(tmp_path / 'new.json')],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 1, result.stderr
    assert result.stdout.splitlines()[:4] == [
        'catalog: 2 rules -> 3 rules (+2, -1)',
        'toolkit: 0.2.0 -> 0.3.0',
        'pydantic-ai: 1.0 -> 1.1',
        'regression: files/kept: passed -> failed: kept broke on asyncio',
    ]
