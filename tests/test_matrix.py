"""`matrix` and submission folders: the committed table is current, a changed byte is refused, bad YAML is one line."""

from __future__ import annotations

import json
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from workspace_conformance import __version__
from workspace_conformance.cli import main
from workspace_conformance.reports.matrix import (
    FILES,
    MatrixRow,
    catalog_hash,
    group_rows,
    load_rows,
    render_json,
    render_markdown,
    row_of,
)
from workspace_conformance.reports.verify import CHECKSUMS, checksums, load_report

ROOT = Path(__file__).resolve().parent.parent
SUBMISSIONS = ROOT / 'submissions'
MEMORY = SUBMISSIONS / 'workspace-conformance' / 'memory'
OUR_TARGETS = ('local', 'local-shell', 'memory', 'provider')


def _unlinked(markdown: str) -> str:
    """The table without its links' targets, which depend on where the file is written."""
    return re.sub(r'\]\([^)]*\)', ']', markdown)


def test_docs_matrix_md_is_current() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / 'scripts' / 'generate_submissions.py'), '--check'], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_matrix_over_our_submissions_writes_the_committed_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / 'matrix'
    assert main(['matrix', str(SUBMISSIONS), '--out', str(out)]) == 0, capsys.readouterr().err
    assert sorted(path.name for path in out.iterdir()) == sorted(FILES)
    written = (out / 'matrix.md').read_text()
    committed = (ROOT / 'docs' / 'matrix.md').read_text().split('\n', 1)[1]  # below its "generated" comment
    assert _unlinked(written) == _unlinked(committed)
    for target in OUR_TARGETS:
        assert f'[workspace-conformance/{target}](' in written
    links = re.findall(r'\]\(([^)#]+)', written)
    assert links and all((out / link).resolve().is_file() for link in links)  # every link reaches a report.html


def _memory_bundle_copy(tmp_path: Path) -> Path:
    bundle = tmp_path / 'bundles' / 'memory'
    shutil.copytree(MEMORY / 'bundle', bundle)
    return bundle


def _change_one_byte(report: Path) -> None:
    data = bytearray(report.read_bytes())
    at = data.index(b'"duration": ') + len(b'"duration": ')  # a digit: still valid JSON, only the hash can tell
    data[at] = ord('7') if data[at] != ord('7') else ord('8')
    report.write_bytes(bytes(data))


def test_a_submission_with_one_changed_byte_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / 'acme' / 'memory'
    shutil.copytree(MEMORY, folder)
    _change_one_byte(folder / 'bundle' / 'report.json')
    assert main(['verify', str(folder)]) == 1
    assert capsys.readouterr().out.splitlines() == [
        'bundle/report.json: its SHA-256 does not match SHA256SUMS (the file was changed)'
    ]
    assert main(['matrix', str(tmp_path), '--out', str(tmp_path / 'out')]) == 1
    (line,) = capsys.readouterr().err.splitlines()
    assert str(folder.resolve() / 'bundle') in line and 'bundle/report.json: its SHA-256 does not match' in line


def test_a_bundle_with_one_changed_byte_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bundle = _memory_bundle_copy(tmp_path)
    shutil.copytree(SUBMISSIONS / 'workspace-conformance' / 'local' / 'bundle', tmp_path / 'bundles' / 'local')
    _change_one_byte(bundle / 'report.json')
    out = tmp_path / 'out'
    assert main(['matrix', str(tmp_path / 'bundles'), '--out', str(out)]) == 1
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1, lines
    assert str(bundle.resolve()) in lines[0] and 'report.json: its SHA-256 does not match' in lines[0]
    assert not out.exists() or not any(out.iterdir())  # nothing written: a matrix never silently lacks a row


def test_a_submission_whose_yaml_changed_is_refused_by_matrix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / 'acme' / 'memory'
    shutil.copytree(MEMORY, folder)
    (folder / 'submission.yaml').write_text((folder / 'submission.yaml').read_text() + 'extra: 1\n')
    assert main(['matrix', str(tmp_path), '--out', str(tmp_path / 'out')]) == 1
    (line,) = capsys.readouterr().err.splitlines()
    assert 'submission.yaml: extra: not a field' in line and f'verify {folder.resolve()}' in line


def test_a_path_without_a_bundle_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(['matrix', str(tmp_path), '--out', str(tmp_path / 'out')]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert 'holds no bundle' in line
    assert main(['matrix', str(tmp_path / 'nowhere'), '--out', str(tmp_path / 'out')]) == 2
    assert 'no such directory' in capsys.readouterr().err


def _row_of(report_path: Path, **changes: object) -> MatrixRow:
    return row_of(report_path.parent, load_report(report_path).model_copy(update=changes))


def test_rows_count_each_area_and_their_waivers() -> None:
    report = load_report(MEMORY / 'bundle' / 'report.json')
    (rows, refused) = load_rows([MEMORY / 'bundle'])
    assert refused == []
    (row,) = rows
    summaries = [rule for suite in report.suites for rule in suite.rules]
    assert sum(count.passed for count in row.areas.values()) == sum(rule.status == 'passed' for rule in summaries)
    assert sum(count.applicable for count in row.areas.values()) == sum(
        rule.status != 'not-applicable' for rule in summaries
    )
    assert row.subject == 'workspace-conformance/memory' and row.verdict == report.verdict
    assert row.event_loops == ('asyncio', 'trio')


def test_different_toolkit_versions_or_catalogs_are_never_one_table() -> None:
    path = MEMORY / 'bundle' / 'report.json'
    report = load_report(path)
    suite = report.suites[0]
    fewer = suite.model_copy(update={'results': [r for r in suite.results if r.rule_id != suite.rules[0].rule_id]})
    rows = [
        _row_of(path),
        _row_of(path, toolkit_version='0.1.0'),
        _row_of(path, suites=[fewer]),
    ]
    assert catalog_hash(report)[0] != catalog_hash(report.model_copy(update={'suites': [fewer]}))[0]
    groups = group_rows(rows)
    assert len(groups) == 3 and all(len(group.rows) == 1 for group in groups)
    assert render_markdown(groups, ROOT).count('\n## workspace-conformance ') == 3


def test_the_matrix_is_the_same_whatever_the_order_of_its_bundles() -> None:
    rows, _ = load_rows(sorted((SUBMISSIONS / 'workspace-conformance').glob('*/bundle')))
    assert len(rows) >= len(OUR_TARGETS)
    shuffled = list(rows)
    random.Random(7).shuffle(shuffled)
    assert render_markdown(group_rows(shuffled), ROOT) == render_markdown(group_rows(rows), ROOT)
    assert render_json(group_rows(shuffled), ROOT) == render_json(group_rows(rows), ROOT)
    verdicts = [row.verdict for group in group_rows(rows) for row in group.rows]
    assert verdicts == sorted(verdicts, key=['certified', 'partial', 'not certified'].index)


def test_verify_accepts_our_submission_folders(capsys: pytest.CaptureFixture[str]) -> None:
    for target in OUR_TARGETS:
        assert main(['verify', str(SUBMISSIONS / 'workspace-conformance' / target)]) == 0, capsys.readouterr().out
        assert capsys.readouterr().out.startswith('verified: submission ')


@pytest.mark.parametrize(
    ('yaml_text', 'expected'),
    [
        ('organization: [unclosed\n', ['submission.yaml: not valid YAML at line 2']),
        ('- a list\n', ['submission.yaml: not a mapping of fields']),
        (None, ['submission.yaml: contact: missing: add it', 'submission.yaml: extra: not a field of a submission']),
        ('mode: docker\n', ['submission.yaml: mode: must be one of certify, pytest']),
        ('url: ftp://x\n', ['submission.yaml: url: an http(s):// address']),
        ('toolkit_version: 9.9\n', ['submission.yaml: toolkit_version: 9.9 is not text: quote it']),
        ('toolkit_version: "9.9"\n', ['submission.yaml: toolkit_version: 9.9, but the bundle was made by']),
    ],
)
def test_a_bad_submission_yaml_is_one_line_per_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], yaml_text: str | None, expected: list[str]
) -> None:
    folder = tmp_path / 'memory'
    shutil.copytree(MEMORY, folder)
    good = (folder / 'submission.yaml').read_text()
    if yaml_text is None:  # a field missing and one too many
        text = re.sub(r'contact:\n(  - .*\n)+', '', good) + 'extra: 1\n'
    elif yaml_text.startswith(('organization: [', '- ')):
        text = yaml_text
    else:  # one field replaced
        key = yaml_text.split(':')[0]
        text = re.sub(rf'^{key}: .*\n', yaml_text, good, flags=re.MULTILINE)
    (folder / 'submission.yaml').write_text(text)
    assert main(['verify', str(folder)]) == 1
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert 'Traceback' not in captured.out + captured.err
    assert len(lines) == len(expected), lines
    for line, start in zip(lines, expected, strict=True):
        assert line.startswith(start), lines


def test_a_submission_without_readme_or_bundle_says_what_to_add(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / 'memory'
    folder.mkdir()
    shutil.copy(MEMORY / 'submission.yaml', folder)
    assert main(['verify', str(folder)]) == 1
    assert capsys.readouterr().out.splitlines() == [
        'README.md: missing: add one with the steps that reproduce the bundle',
        'bundle/: missing: put the bundle there exactly as certify wrote it',
    ]


def test_a_certify_mode_that_is_not_certify_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / 'memory'
    shutil.copytree(MEMORY, folder)
    yaml_path = folder / 'submission.yaml'
    yaml_path.write_text(yaml_path.read_text().replace('mode: certify', 'mode: pytest'))
    assert main(['verify', str(folder)]) == 1
    assert capsys.readouterr().out.splitlines() == [
        'submission.yaml: mode: pytest, but the bundle has environment.json, which certify writes: say certify'
    ]


def test_a_bundle_of_another_toolkit_version_is_its_own_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    older = _memory_bundle_copy(tmp_path)
    report = load_report(older / 'report.json').model_copy(update={'toolkit_version': '0.1.0'})
    (older / 'report.json').write_text(report.model_dump_json(indent=2) + '\n')
    (older / CHECKSUMS).write_text(checksums(older))  # as that version would have written it
    assert main(['verify', str(older)]) == 1  # verify cannot check it against this version's catalog...
    capsys.readouterr()
    shutil.copytree(MEMORY / 'bundle', tmp_path / 'bundles' / 'current')
    out = tmp_path / 'out'
    assert main(['matrix', str(tmp_path / 'bundles'), '--out', str(out)]) == 0, capsys.readouterr().err
    data = json.loads((out / 'matrix.json').read_text())  # ...the matrix shows it, apart from the current one
    assert [group['toolkit_version'] for group in data['groups']] == ['0.1.0', __version__]
    assert [len(group['rows']) for group in data['groups']] == [1, 1]
