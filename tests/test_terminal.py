"""What a failing run prints: one block per failing rule, the backend's frames and not the suite's, a few lines."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from workspace_conformance import rules
from workspace_conformance.reports.model import Report, RuleOutcome, RuleSummary
from workspace_conformance.reports.render.terminal import EVIDENCE_LINES, failure_block

BROKEN_BACKEND = """from pydantic_ai.workspaces import LocalWorkspaceBackend


def refuse(path):
    raise RuntimeError(f'provider refused {path}')


class Broken(LocalWorkspaceBackend):
    async def exists(self, path):
        return refuse(path)

    async def run(self, command, *, shell=False, env=None, timeout=None):
        result = await super().run(command, shell=shell, env=env, timeout=timeout)
        return type(result)(exit_code=0, stdout=result.stdout, stderr=result.stderr)


def build(run_dir):
    run_dir.mkdir(parents=True, exist_ok=True)
    return Broken(run_dir)
"""
SUITE = """
import pytest
from broken_backend import Broken
from workspace_conformance import WorkspaceBackendSuite


class TestBroken(WorkspaceBackendSuite):
    @pytest.fixture(scope='class')
    @classmethod
    def backend(cls, tmp_path_factory):
        return Broken(tmp_path_factory.mktemp('ws'))
"""
FAILING = ('files/exists_of_the_working_dir_is_true', 'commands/a_missing_program_exits_127')
SELECTED = 'exists_of_the_working_dir_is_true or a_missing_program_exits_127 or cancellation_mid_create_keeps_the_ref'
"""Two rules the broken backend fails (one raising in its own code), and one that skips as fixture-missing."""
MACHINERY = (
    '_guard.py',
    '_failures.py',
    '_rule.py',
    '_tracing.py',
    '_mirror.py',
    '_concurrency.py',
    'engine/session.py',
    'conformance/plugin.py',
)


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    pytester.makepyfile(broken_backend=BROKEN_BACKEND, test_subject=SUITE)
    return pytester.runpytest_inprocess('-p', 'no:cacheprovider', '-p', 'no:randomly', '-k', SELECTED, *args)


def test_a_failing_rule_is_one_block_naming_both_loops_and_the_backend_frames(pytester: pytest.Pytester) -> None:
    out = pytester.path / 'report'
    result = _run(pytester, '-rs', '--conformance-report', str(out))
    result.assert_outcomes(failed=4, skipped=2)
    lines = result.stdout.lines
    for rule_id in FAILING:
        headers = [line for line in lines if line.startswith(f'  [{rule_id}]')]
        assert headers == [f'  [{rule_id}] (core) failed on asyncio, trio'], headers
    block = lines[lines.index(f'  [{FAILING[0]}] (core) failed on asyncio, trio') :][:5]
    assert block[1].startswith('    contract: "`exists` is `True`'), block
    assert block[2].startswith('    observed: raised RuntimeError: provider refused'), block
    assert block[3:5] == ['    broken_backend.py:10 in exists', '    broken_backend.py:5 in refuse'], block
    # The frames come from the report's data, recorded where the rule failed.
    report = Report.model_validate_json((out / 'report.json').read_text())
    [frames] = {
        tuple(outcome.frames)
        for suite in report.suites
        for outcome in suite.results
        if outcome.rule_id == 'exists_of_the_working_dir_is_true'
    }
    assert frames == ('broken_backend.py:10 in exists', 'broken_backend.py:5 in refuse')
    # The rules -k left out are one line, with the report that lists them.
    missing = len(rules()) - 3
    result.stdout.fnmatch_lines([f'missing: {missing} rules have no result*; the report lists them: *report.json'])
    result.stdout.no_fnmatch_line('*no result on*')
    # pytest's own folding already says a rule's skip once for both loops, at the rule's line.
    skipped = [line for line in lines if line.startswith('SKIPPED')]
    assert len(skipped) == 1 and skipped[0].startswith('SKIPPED [2] ') and 'lifecycle.py:' in skipped[0], skipped


def test_pytest_shows_one_traceback_per_failure_without_the_suites_frames(pytester: pytest.Pytester) -> None:
    result = _run(pytester)
    text = result.stdout.str()
    # The message is whole, at the backend's own line, and the rule's body leads to it.
    result.stdout.fnmatch_lines(
        [
            '*await workspace.exists(path)*',
            '*raise RuntimeError*',
            'E *RuleFailure: [[]files/exists_of_the_working_dir_is_true[]] contract: *',
            'E * observed: raised RuntimeError: provider refused *',
            'broken_backend.py:5: RuleFailure',
        ]
    )
    assert not [name for name in MACHINERY if name in text], text
    assert 'direct cause' not in text and 'During handling' not in text, text


@pytest.mark.parametrize('asked', ['--tb=long', '-v'])
def test_long_tracebacks_or_verbose_bring_the_suites_frames_back(pytester: pytest.Pytester, asked: str) -> None:
    result = _run(pytester, asked)
    text = result.stdout.str()
    assert '_tracing.py' in text and '_mirror.py' in text, text
    result.stdout.fnmatch_lines(['E *RuleFailure: [[]files/exists_of_the_working_dir_is_true[]] contract: *'])


def _outcome(loop: str, excerpt: str, frames: list[str] | None = None) -> RuleOutcome:
    return RuleOutcome(
        rule_id='exists',
        area='files',
        level='core',
        clause='...',
        anyio_backend=loop,
        outcome='failed',
        excerpt=excerpt,
        frames=frames or [],
    )


SUMMARY = RuleSummary(rule_id='exists', area='files', level='core', status='failed')


def test_the_same_failure_on_two_loops_is_said_once_even_with_its_own_scratch_names() -> None:
    said = '[files/exists] contract: "c"\nobserved: refused /w/.workspace-conformance-exists-'
    block = failure_block(
        SUMMARY,
        [
            _outcome('asyncio', said + '0a1b2c3d4e5f/x', ['b.py:1 in f']),
            _outcome('trio', said + '9f8e7d6c5b4a/x', ['b.py:1 in f']),
        ],
    )
    assert block == [
        '  [files/exists] (core) failed on asyncio, trio',
        '    contract: "c"',
        '    observed: refused /w/.workspace-conformance-exists-0a1b2c3d4e5f/x',
        '    b.py:1 in f',
    ]


def test_different_failures_on_two_loops_are_one_block_said_by_loop() -> None:
    block = failure_block(
        SUMMARY,
        [
            _outcome('trio', '[files/exists] contract: "c"\nobserved: raised RuntimeError: no running event loop'),
            _outcome('asyncio', '[files/exists] contract: "c"\nobserved: returned 1234, expected 5678'),
        ],
    )
    assert block == [
        '  [files/exists] (core) failed on asyncio, trio',
        '    on trio:',
        '      contract: "c"',
        '      observed: raised RuntimeError: no running event loop',
        '    on asyncio:',
        '      contract: "c"',
        '      observed: returned 1234, expected 5678',
    ]


def test_a_long_failure_message_is_cut_to_a_few_lines_in_the_terminal() -> None:
    notes = '\n'.join(f'note {index}' for index in range(50))
    block = failure_block(SUMMARY, [_outcome('asyncio', f'[files/exists] contract: "c"\nobserved: x\n{notes}')])
    assert len(block) == 1 + EVIDENCE_LINES, block
    assert block[-1] == f'    ... ({52 - EVIDENCE_LINES + 1} more lines in the report)'


CLI_SELECTED = (
    'exists_of_the_working_dir_is_true or a_missing_program_exits_127 or exit_codes_0_to_255 or test_stat_and'
)
"""Three rules the broken backend fails, and one it passes."""
QUICK = ('--anyio-backend', 'asyncio')


def _certify(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    (cwd / 'broken_backend.py').write_text(BROKEN_BACKEND)
    return subprocess.run(
        [
            sys.executable,
            '-m',
            'workspace_conformance',
            'certify',
            'broken_backend:build',
            '-k',
            CLI_SELECTED,
            *QUICK,
            *args,
        ],
        cwd=cwd,
        env={**os.environ, 'PYTHONPATH': os.pathsep.join(filter(None, [str(cwd), os.environ.get('PYTHONPATH')]))},
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.slow  # a whole-suite run
def test_certify_of_three_failing_rules_prints_their_blocks_within_the_line_budget(tmp_path: Path) -> None:
    result = _certify(tmp_path)
    assert result.returncode == 1, result.stdout[-3000:]
    printed = (result.stdout + result.stderr).splitlines()
    assert len(printed) <= 40, '\n'.join(printed)  # the budget is 100 for a whole run's 3 failures
    for rule_id in (*FAILING, 'commands/exit_codes_0_to_255_round_trip'):
        assert sum(line.startswith(f'  [{rule_id}] (core) failed on asyncio') for line in printed) == 1, printed
    assert '    broken_backend.py:10 in exists' in printed
    assert not [line for line in printed if line.startswith('FAILED') or 'Traceback' in line or '= FAILURES =' in line]
    assert not [name for name in MACHINERY if name in result.stdout]
    # pytest's own failure sections come back when asked for, with the suite's frames in the long style.
    long = _certify(tmp_path, '--tb=long')
    assert long.returncode == 1, long.stdout[-3000:]
    assert '= FAILURES =' in long.stdout and '_tracing.py' in long.stdout, long.stdout[-3000:]
    assert 'FAILED ' in long.stdout
