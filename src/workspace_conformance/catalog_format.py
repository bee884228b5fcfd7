"""The rule catalog rendered as a terminal table, JSON, or Markdown (the source of `docs/rules.md`)."""

from __future__ import annotations

import json
import shutil
import textwrap
from collections.abc import Mapping, Sequence
from importlib import resources

from ._version import __version__
from .suite import AREAS, Rule

__all__ = ('FORMATS', 'STRENGTH_TABLE', 'render_catalog', 'render_suites', 'strength_of')

FORMATS = ('table', 'json', 'markdown')


def mutant_counts() -> Mapping[str, int]:
    """How many mutants of the project's gallery prove each rule can fail (shipped with the package)."""
    shipped = resources.files('workspace_conformance').joinpath('mutant_counts.json')
    counts: dict[str, int] = json.loads(shipped.read_text()) if shipped.is_file() else {}
    return counts


def _requires(rule: Rule) -> str:
    return ', '.join(rule.requires) or '-'


def strength_of(rule: Rule) -> str:
    """`must B03` (with the clause id that makes it one), `should`, or `claim bounded` (the claim it binds by)."""
    if rule.strength == 'must':
        return f'must {rule.clause_id}'
    return f'claim {rule.claim}' if rule.strength == 'claim' else 'should'


STRENGTH_TABLE = (
    '| strength | what makes it one | a failure |',
    '| --- | --- | --- |',
    '| `must` | a sentence of the contract (the Workspaces docs page, a protocol docstring) requires it: the rule '
    "names that clause's id in docs/contract-clauses.toml, and holds on at least two real backends here | fails "
    'the rule: `not certified` |',
    "| `should` | good practice, a peer's convention, or a provider's known defect the text does not forbid; every "
    'new rule starts here | an **advisory**: listed in every report and counted apart, never a failure, never a '
    'pass; its gaps never change the verdict |',
    '| `claim` | a property only some subjects promise (a bounded result, a root that is a boundary, isolation), '
    'declared by the subject (`claims`, `certify --claims`; `isolation_claims`, `--isolation`) | declared: fails the '
    'rule; not declared: an advisory "not claimed" with what was seen (an isolation claim not made is not '
    'applicable) |',
)
"""The three strengths in one table: docs/rules.md opens with it, docs/writing-rules.md explains graduation."""


SUITE_SUMMARIES: Mapping[str, str] = {
    'WorkspaceBackendSuite': "Checks a backend's protocol: subclass it in your tests, or run `certify`.",
    'WorkspaceCapabilitySuite': "Checks a capability's `get_workspace` and agent runs over it (docs/capabilities.md).",
    'WorkspaceToolSuite': 'Checks the tools a capability gives the model, in every kind of workspace (docs/tools.md).',
    'WorkspaceIsolationSuite': 'Checks what a sandbox claims to keep from its host, with canaries (docs/isolation.md).',
}
"""One line on what each suite checks, printed under its heading."""

CLAUSE_INDENT = '    '


def _clause_lines(clause: str, width: int) -> list[str]:
    """The clause wrapped to `width` columns (at least 60), each line indented under its rule."""
    return textwrap.wrap(
        clause,
        width=max(width, 60),
        initial_indent=CLAUSE_INDENT,
        subsequent_indent=CLAUSE_INDENT,
        break_long_words=False,
        break_on_hyphens=False,
    )


def _table(catalog: Sequence[Rule], width: int | None = None) -> str:
    columns = width if width is not None else shutil.get_terminal_size().columns
    name = max(len(rule.qualified) for rule in catalog)
    proven = mutant_counts()
    lines = [
        f'{"rule":<{name}}  {"level":<8}  {"strength":<16}  {"upstream":<8}  {"mutants":<7}  requires',
        f'{CLAUSE_INDENT}clause',
    ]
    for rule in catalog:
        lines.append(
            f'{rule.qualified:<{name}}  {rule.level:<8}  {strength_of(rule):<16}  '
            f'{"yes" if rule.upstream else "no":<8}  {proven.get(rule.id, 0):<7}  {_requires(rule)}'
        )
        lines += _clause_lines(rule.clause, columns)
    core = sum(rule.level == 'core' for rule in catalog)
    must = sum(rule.strength == 'must' for rule in catalog)
    claims = sum(rule.strength == 'claim' for rule in catalog)
    lines.append(
        f'{len(catalog)} rules ({core} core, {len(catalog) - core} extended; '
        f'{must} must, {len(catalog) - must - claims} should, {claims} claim)'
    )
    return '\n'.join(lines) + '\n'


def _cell(text: str) -> str:
    return text.replace('|', '\\|')


def _markdown(
    catalog: Sequence[Rule],
    suites: Mapping[str, Sequence[Rule]] | None = None,
    held_on: Mapping[str, Sequence[str]] | None = None,
) -> str:
    core = sum(rule.level == 'core' for rule in catalog)
    must = sum(rule.strength == 'must' for rule in catalog)
    claims = sum(rule.strength == 'claim' for rule in catalog)
    lines = [
        '# Rule catalog',
        '',
        f'Generated from the `@rule` declarations of workspace-conformance {__version__} by '
        '`python scripts/generate_docs.py`; do not edit by hand.',
        '',
        f'{len(catalog)} rules: {core} core, {len(catalog) - core} extended. '
        "A rule marked *upstream* has the same name and meaning in pydantic-ai's own suite. "
        '*Mutants* counts the broken backends in `tests/mutants/` that make the rule fail: a rule no mutant '
        'fails would be a check that cannot fail. *Alone* marks a rule that never runs at the same time as others '
        '(`--conformance-concurrency`): it measures time, or builds, attaches to or destroys environments.',
        '',
        f'Strength: {must} must, {len(catalog) - must - claims} should, {claims} claim. Only `must` rules, and the '
        'claims a subject makes, decide the verdict:',
        '',
        *STRENGTH_TABLE,
        *_grounds(catalog),
        *(
            [
                '',
                '*Held on* lists the real backends whose committed certification (`submissions/`) passed the rule '
                'on every event loop.',
            ]
            if held_on is not None
            else []
        ),
    ]
    if suites is None:
        return '\n'.join([*lines, *_markdown_areas(catalog, '##', held_on)]) + '\n'
    for suite, in_suite in suites.items():
        if not in_suite:
            continue
        summary = SUITE_SUMMARIES.get(suite)
        lines += ['', f'## {suite}', *(['', f'{len(in_suite)} rules. {summary}'] if summary else [])]
        lines += _markdown_areas(in_suite, '###', held_on)
    return '\n'.join(lines) + '\n'


def _grounds(catalog: Sequence[Rule]) -> list[str]:
    """The rules that ground a backend operation, as a table under a paragraph on what `broken` means."""
    grounding = [(operation, rule) for rule in catalog for operation in rule.grounds]
    if not grounding:
        return []
    return [
        '',
        'A rule whose own steps fail on an error of a basic backend operation says nothing of its clause. Each such '
        'operation has one rule that checks it first (it *grounds* it: `@rule(grounds=...)`); when that rule fails on '
        'an error of its operation, every other rule that ended on an error of the same operation, on the same event '
        'loop, is reported **broken**, naming the rule it echoes: a vendor sees one cause, not forty. `broken` is '
        'listed in every report format (JUnit: an `<error type="broken">`), is never a pass, and leaves the verdict '
        '`not certified`, as the failure it echoes does.',
        '',
        '| operation | grounded by |',
        '| --- | --- |',
        *(f'| `{operation}` | `{rule.qualified}` |' for operation, rule in grounding),
    ]


def _markdown_areas(
    catalog: Sequence[Rule], heading: str, held_on: Mapping[str, Sequence[str]] | None = None
) -> list[str]:
    lines: list[str] = []
    proven = mutant_counts()
    held = '' if held_on is None else ' held on |'

    def rule_held(rule: Rule) -> str:
        return '' if held_on is None else f' {", ".join(held_on.get(rule.id, ())) or "-"} |'

    for area in AREAS:
        in_area = [rule for rule in catalog if rule.area == area]
        if not in_area:
            continue
        lines += [
            '',
            f'{heading} {area}',
            '',
            f'| rule | level | strength | requires | upstream | mutants | alone |{held} clause |',
            f'| --- | --- | --- | --- | --- | --- | --- |{" --- |" if held else ""} --- |',
        ]
        lines += [
            f'| `{rule.id}` | {rule.level} | {strength_of(rule)} | {_requires(rule)} '
            f'| {"yes" if rule.upstream else "no"} | {proven.get(rule.id, 0)} | {"yes" if rule.runs_alone else "no"} |'
            f'{rule_held(rule)} {_cell(rule.clause)} |'
            for rule in in_area
        ]
    return lines


def render_catalog(catalog: Sequence[Rule], fmt: str, width: int | None = None) -> str:
    """The catalog in one of `FORMATS`; a table wraps each clause to `width` columns (default: the terminal's)."""
    if fmt == 'json':
        proven = mutant_counts()
        listed = [{**rule.to_dict(), 'mutants': proven.get(rule.id, 0)} for rule in catalog]
        return json.dumps({'version': __version__, 'rules': listed}, indent=2) + '\n'
    if fmt == 'markdown':
        return _markdown(catalog)
    return _table(catalog, width)


def render_suites(
    suites: Mapping[str, Sequence[Rule]], fmt: str, held_on: Mapping[str, Sequence[str]] | None = None
) -> str:
    """The catalogs of several suites (class name -> rules): JSON rules carry their `suite`, a table one per suite.

    `held_on` (rule id -> real backends that passed it), for docs/rules.md, adds the evidence a `must` rule stands on.
    """
    if fmt == 'json':
        proven = mutant_counts()
        listed = [
            {**rule.to_dict(), 'suite': suite, 'mutants': proven.get(rule.id, 0)}
            for suite, catalog in suites.items()
            for rule in catalog
        ]
        return json.dumps({'version': __version__, 'rules': listed}, indent=2) + '\n'
    if fmt == 'markdown':
        return _markdown([rule for catalog in suites.values() for rule in catalog], suites, held_on)
    return '\n'.join(_suite_table(suite, catalog) for suite, catalog in suites.items() if catalog)


def _suite_table(suite: str, catalog: Sequence[Rule]) -> str:
    summary = SUITE_SUMMARIES.get(suite)
    heading = f'{suite}\n' + '=' * len(suite) + '\n' + (f'{summary}\n' if summary else '')
    return heading + _table(catalog)
