"""The catalog is built from the decorators, is well formed, and docs/rules.md is generated from it."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from workspace_conformance import AREAS, LEVELS, WorkspaceBackendSuite, catalog, rule, rules
from workspace_conformance.capability import capability_rules
from workspace_conformance.cli import main
from workspace_conformance.engine._versions import pydantic_ai_version
from workspace_conformance.isolation import isolation_rules
from workspace_conformance.reports.model import RuleOutcome, SuiteReport
from workspace_conformance.reports.verify import catalog_of
from workspace_conformance.tools import tool_rules

ROOT = Path(__file__).resolve().parent.parent


def test_ids_are_unique_and_every_rule_states_one_clause() -> None:
    found = rules()
    assert len({r.id for r in found}) == len(found)
    for r in found:
        assert r.area in AREAS and r.level in LEVELS
        assert r.clause.endswith('.'), f'{r.id}: the clause should be one full sentence: {r.clause!r}'


def test_catalog_follows_subclass_overrides() -> None:
    class Narrowed(WorkspaceBackendSuite):
        test_exists = None  # type: ignore[assignment]  # a project that drops a rule

        @rule(area='files')
        async def test_project_specific(self) -> None:
            """A project's own rule joins the catalog."""

    ids = {r.id for r in catalog(Narrowed)}
    assert 'exists' not in ids and 'project_specific' in ids
    assert len(ids) == len(rules())


def test_a_rule_without_a_docstring_is_refused() -> None:
    with pytest.raises(TypeError, match='docstring'):

        @rule(area='files')
        async def test_nothing(self: object) -> None:
            pass


def test_docs_rules_md_is_current() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / 'scripts' / 'generate_docs.py'), '--check'], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout


def test_rules_command_prints_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(['rules', '--format', 'json']) == 0
    data = json.loads(capsys.readouterr().out)
    assert [(r['suite'], r['id']) for r in data['rules']] == [
        *(('WorkspaceBackendSuite', r.id) for r in rules()),
        *(('WorkspaceCapabilitySuite', r.id) for r in capability_rules()),
        *(('WorkspaceToolSuite', r.id) for r in tool_rules()),
        *(('WorkspaceIsolationSuite', r.id) for r in isolation_rules()),
    ]


def test_rules_command_lists_one_suite_when_asked(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(['rules', '--suite', 'capability']) == 0
    out = capsys.readouterr().out
    assert out.startswith('WorkspaceCapabilitySuite\n') and 'WorkspaceBackendSuite' not in out
    assert all(r.id in out for r in capability_rules()) and not any(f'/{r.id} ' in out for r in rules())


def test_rules_command_lists_the_tool_suite_when_asked(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(['rules', '--suite', 'tools']) == 0
    out = capsys.readouterr().out
    assert out.startswith('WorkspaceToolSuite\n') and 'WorkspaceCapabilitySuite' not in out
    assert all(r.qualified in out for r in tool_rules()) and not any(f'/{r.id} ' in out for r in rules())


def _suite_that_ran(rule_ids: list[str]) -> SuiteReport:
    results = [
        RuleOutcome(rule_id=i, area='runs', level='core', clause='.', anyio_backend='asyncio', outcome='passed')
        for i in rule_ids
    ]
    return SuiteReport(subject='s', anyio_backends=['asyncio'], results=results, rules=[], verdict='certified')


def test_verify_checks_a_capability_suite_against_the_capability_catalog() -> None:
    capability = [r.id for r in capability_rules()]
    assert set(catalog_of(_suite_that_ran(capability[:1]))) == set(capability)
    assert set(catalog_of(_suite_that_ran([rules()[0].id]))) == {r.id for r in rules()}


def test_verify_checks_a_tool_suite_against_the_tool_catalog() -> None:
    tools = [r.id for r in tool_rules()]
    assert set(catalog_of(_suite_that_ran(tools[:1]))) == set(tools)


def test_contract_coverage_table_names_real_rules_and_keeps_its_count() -> None:
    sys.path.insert(0, str(ROOT / 'scripts'))
    try:
        from contract_coverage import counts, load, percent_covered, problems_of
    finally:
        sys.path.remove(str(ROOT / 'scripts'))
    promised, clauses = load()
    assert len(clauses) == 155 and counts(clauses)['covered'] >= promised
    assert percent_covered(clauses) >= 90, f'{percent_covered(clauses):.1f} % of the pass/fail clauses are covered'
    broken = (dataclasses.replace(clauses[0], rules=('no_such_rule',)), *clauses[1:])
    assert problems_of(broken)[0] == f"{clauses[0].id} names rules that do not exist: ['no_such_rule']"


def test_every_must_rule_is_tied_to_a_must_clause_that_names_it() -> None:
    """A `must` rule names a clause id of docs/contract-clauses.toml whose strength is must and that lists it."""
    sys.path.insert(0, str(ROOT / 'scripts'))
    try:
        from contract_coverage import load, problems_of
    finally:
        sys.path.remove(str(ROOT / 'scripts'))
    _, clauses = load()  # load() raises on any problem, must ties included
    every = [*rules(), *capability_rules(), *tool_rules(), *isolation_rules()]
    must = [meta for meta in every if meta.strength == 'must']
    assert must and all(meta.clause_id for meta in must)
    assert all(meta.strength == 'must' for meta in every if meta.upstream), 'upstream rules keep upstream verdicts'
    assert {meta.strength for meta in isolation_rules()} == {'claim'}
    first = next(clause for clause in clauses if clause.strength == 'must' and clause.rules)
    weakened = tuple(dataclasses.replace(c, strength='should') if c is first else c for c in clauses)
    tied = [meta.qualified for meta in must if meta.clause_id == first.id]
    assert any(f'is must by clause {first.id}, whose strength is should' in p for p in problems_of(weakened)), tied
    unnamed = tuple(dataclasses.replace(c, rules=()) if c is first else c for c in clauses)
    assert any('does not name it among its rules' in problem for problem in problems_of(unnamed))


def test_a_rule_declares_how_it_binds_at_definition() -> None:
    from workspace_conformance.authoring import rule

    with pytest.raises(ValueError, match='must be a clause id'):
        rule(area='files', must='not-an-id')
    with pytest.raises(ValueError, match='a claim binds only where declared'):
        rule(area='bounds', must='T01', claim='bounded')
    with pytest.raises(ValueError, match='a tool rule claims one of'):
        rule(area='files', claim='bounded')


@pytest.mark.parametrize('fmt', ['table', 'markdown'])
def test_rules_command_lists_every_rule(fmt: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(['rules', '--format', fmt]) == 0
    out = capsys.readouterr().out
    assert all(r.id in out for r in rules())


def test_shipped_mutant_counts_are_current() -> None:
    script = ROOT / 'scripts' / 'generate_mutant_counts.py'
    result = subprocess.run([sys.executable, str(script), '--check'], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_rules_table_prints_every_clause_under_a_heading_per_suite(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv('COLUMNS', '1000')
    assert main(['rules']) == 0
    lines = capsys.readouterr().out.splitlines()
    for suite in ('WorkspaceBackendSuite', 'WorkspaceCapabilitySuite', 'WorkspaceToolSuite', 'WorkspaceIsolationSuite'):
        heading = lines.index(suite)
        assert lines[heading + 1] == '=' * len(suite) and lines[heading + 2].startswith('Checks ')
    for listed in (*rules(), *capability_rules(), *tool_rules(), *isolation_rules()):
        row = next(i for i, line in enumerate(lines) if line.startswith(f'{listed.qualified} '))
        assert lines[row + 1] == f'    {listed.clause}', listed.id


def test_rules_table_wraps_clauses_to_the_terminal(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv('COLUMNS', '80')
    assert main(['rules', '--suite', 'backend']) == 0
    lines = capsys.readouterr().out.splitlines()
    clause_lines = [line for line in lines if line.startswith('    ') and line != '    clause']
    assert all(len(line) <= 80 or ' ' not in line.strip() for line in clause_lines)
    assert ' '.join(line.strip() for line in clause_lines) == ' '.join(r.clause for r in rules())


def test_docs_rules_md_names_both_suites() -> None:
    text = (ROOT / 'docs' / 'rules.md').read_text()
    assert text.index('## WorkspaceBackendSuite') < text.index('## WorkspaceCapabilitySuite')


def test_the_clauses_were_reviewed_for_the_installed_pydantic_ai() -> None:
    """A slim newer than the table was read against fails here, saying what to review: CI finds a release."""
    sys.path.insert(0, str(ROOT / 'scripts'))
    try:
        from contract_coverage import reviewed_for
    finally:
        sys.path.remove(str(ROOT / 'scripts'))
    reviewed = reviewed_for()
    installed = pydantic_ai_version()
    major, minor = (int(part) for part in installed.split('.')[:2])
    assert (major, minor) <= reviewed, (
        f'pydantic-ai-slim {installed} is newer than {reviewed[0]}.{reviewed[1]}, the version '
        'docs/contract-clauses.toml was last reviewed for: read what changed in pydantic_ai/workspaces/*.py, '
        'capabilities/ and durable_exec/ (its changelog and the diff of conformance.py), add a clause (with `since`) '
        'for each new sentence and rules for the MUSTs (with that `contract=`), then set `reviewed_for` and '
        "noxfile.py's REVIEWED to it"
    )
