"""docs/contract-coverage.md: the contract's clauses (docs/contract-clauses.toml) and the rules that check them."""

from __future__ import annotations

import tomllib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from workspace_conformance.capability import capability_rules
from workspace_conformance.isolation import isolation_rules
from workspace_conformance.suite import rules
from workspace_conformance.tools import tool_rules
from workspace_conformance.vocabulary import STRENGTHS

CLAUSES = Path(__file__).resolve().parent.parent / 'docs' / 'contract-clauses.toml'
STATUSES = ('covered', 'partial', 'unchecked', 'not-a-check')


@dataclass(frozen=True)
class Clause:
    """One checkable sentence of the contract, where it is stated, and the rules that check it."""

    id: str
    level: str
    clause: str
    stated: str
    status: str
    rules: tuple[str, ...]
    note: str
    strength: str = 'should'
    """`must` when the wording requires it, `should` for advice, `claim` for what only some subjects promise."""
    since: str = ''
    """The pydantic-ai-slim (`major.minor`) that added the clause; empty for one as old as the oldest supported."""


def load(path: Path = CLAUSES) -> tuple[int, tuple[Clause, ...]]:
    """The covered count the page promises, and every clause; a malformed or inconsistent row raises ValueError."""
    data = tomllib.loads(path.read_text())
    clauses = tuple(
        Clause(
            id=row['id'],
            level=row['level'],
            clause=row['clause'],
            stated=row['stated'],
            status=row['status'],
            rules=tuple(row['rules']),
            note=row.get('note', ''),
            strength=row.get('strength', ''),
            since=row.get('since', ''),
        )
        for row in data['clause']
    )
    problems = problems_of(clauses)
    if problems:
        raise ValueError(f'{path}: ' + '; '.join(problems))
    return int(data['covered_at_least']), clauses


def reviewed_for(path: Path = CLAUSES) -> tuple[int, int]:
    """The newest pydantic-ai-slim (major, minor) the table was reviewed against (`reviewed_for`)."""
    major, minor = tomllib.loads(path.read_text())['reviewed_for'].split('.')
    return int(major), int(minor)


def problems_of(clauses: tuple[Clause, ...]) -> list[str]:
    """What is wrong with the table: unknown rule ids, bad statuses, missing reasons, repeated clause ids."""
    every = (*rules(), *capability_rules(), *tool_rules(), *isolation_rules())
    known = {r.id for r in every}
    problems: list[str] = []
    seen = Counter(clause.id for clause in clauses)
    problems += [f'clause {name} appears {count} times' for name, count in seen.items() if count > 1]
    for clause in clauses:
        unknown = [name for name in clause.rules if name not in known]
        if unknown:
            problems.append(f'{clause.id} names rules that do not exist: {unknown}')
        if clause.status not in STATUSES:
            problems.append(f'{clause.id} has status {clause.status!r}, not one of {STATUSES}')
        if clause.status in ('covered', 'partial') and not clause.rules:
            problems.append(f'{clause.id} is {clause.status} but names no rule')
        if clause.status == 'unchecked' and clause.rules:
            problems.append(f'{clause.id} is unchecked but names rules {list(clause.rules)}')
        if clause.status in ('partial', 'unchecked', 'not-a-check') and not clause.note:
            problems.append(f'{clause.id} is {clause.status} and needs a note saying what is missing or why')
        if clause.strength not in STRENGTHS:
            problems.append(f'{clause.id} has strength {clause.strength!r}, not one of {STRENGTHS}')
    by_id = {clause.id: clause for clause in clauses}
    for meta in every:
        if meta.strength != 'must':
            continue
        tied = by_id.get(meta.clause_id or '')
        if tied is None:
            problems.append(f'{meta.qualified} is must by clause {meta.clause_id}, which the table does not have')
        elif tied.strength != 'must':
            problems.append(f'{meta.qualified} is must by clause {tied.id}, whose strength is {tied.strength}')
        elif meta.id not in tied.rules:
            problems.append(f'{meta.qualified} is must by clause {tied.id}, which does not name it among its rules')
        elif tied.since and meta.contract != tied.since:
            problems.append(
                f'{meta.qualified} is must by clause {tied.id} of slim {tied.since}, but states contract='
                f'{meta.contract!r}: older slims would run it'
            )
    return problems


def counts(clauses: tuple[Clause, ...]) -> Counter[str]:
    """How many clauses have each status."""
    return Counter(clause.status for clause in clauses)


def percent_covered(clauses: tuple[Clause, ...]) -> float:
    """The share of the pass/fail clauses (all but `not-a-check`, warnings and statements) that are covered."""
    total = counts(clauses)
    return 100.0 * total['covered'] / (len(clauses) - total['not-a-check'])


def _cell(text: str) -> str:
    return text.replace('|', '\\|').replace('\n', ' ')


def render(promised: int, clauses: tuple[Clause, ...]) -> str:
    """The markdown page: a summary per level, then one table row per clause."""
    suite_of = {r.id: 'capability' for r in capability_rules()}
    suite_of |= {r.id: 'tools' for r in tool_rules()} | {r.id: 'isolation' for r in isolation_rules()}
    total = counts(clauses)
    levels = list(dict.fromkeys(clause.level for clause in clauses))
    lines = [
        '# Contract coverage',
        '',
        '<!-- generated by scripts/generate_docs.py from docs/contract-clauses.toml: edit that file, not this one -->',
        '',
        "Every checkable clause of pydantic-ai's workspace contract, 2.62 to 2.78 (the Workspaces docs page and the",
        'docstrings of `pydantic_ai.workspaces`, `capabilities/local_workspace.py` and `durable_exec/`), where it is',
        'stated, its strength, and the rules that check it. Rules marked *(capability)*, *(tools)* or *(isolation)*',
        'belong to `WorkspaceCapabilitySuite`, `WorkspaceToolSuite` or `WorkspaceIsolationSuite`, the others to',
        '`WorkspaceBackendSuite`. **Strength** comes from the wording: `must` where the text requires it (only a',
        '`must` clause can make a rule `must`, and only `must` rules decide the verdict), `should` for advice and good',
        'practice, `claim` for what only some subjects promise and declare ([rules.md](rules.md) has the table).',
        '',
        'A clause is **covered** when rules check every part of it a backend or a capability can get wrong; the note',
        "names any part only pydantic-ai's own code decides. **partial**: the note says what no rule checks.",
        '**unchecked**: the note says why no rule checks it.',
        '',
        f'**{total["covered"]} of {len(clauses)} clauses covered**, {percent_covered(clauses):.1f} % of the '
        f'{len(clauses) - total["not-a-check"]} pass/fail clauses; {total["partial"]} partial, '
        f'{total["unchecked"]} unchecked, {total["not-a-check"]} not a pass/fail clause '
        f'(the test suite fails if fewer than {promised} are covered).',
        '',
        '| level | clauses | covered | partial | unchecked | not a check |',
        '|---|---|---|---|---|---|',
    ]
    for level in levels:
        found = counts(tuple(clause for clause in clauses if clause.level == level))
        lines.append(
            f'| {level} | {sum(found.values())} | {found["covered"]} | {found["partial"]} | {found["unchecked"]} '
            f'| {found["not-a-check"]} |'
        )
    for level in levels:
        lines += ['', f'## {level[:1].upper()}{level[1:]}', '']
        lines += ['| id | strength | clause | stated in | rules | status |', '|---|---|---|---|---|---|']
        for clause in (clause for clause in clauses if clause.level == level):
            named = ', '.join(
                f'`{name}`' + (f' *({suite_of[name]})*' if name in suite_of else '') for name in clause.rules
            )
            status = clause.status + (f': {clause.note}' if clause.note else '')
            since = f' *(slim {clause.since})*' if clause.since else ''
            lines.append(
                f'| {clause.id} | {clause.strength} | {_cell(clause.clause)}{since} | {_cell(clause.stated)} '
                f'| {named or "—"} | {_cell(status)} |'
            )
    return '\n'.join(lines) + '\n'
