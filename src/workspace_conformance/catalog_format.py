"""The rule catalog rendered as a terminal table, JSON, or Markdown (the source of `docs/rules.md`)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from importlib import resources

from ._version import __version__
from .suite import AREAS, Rule

__all__ = ('FORMATS', 'render_catalog', 'render_suites')

FORMATS = ('table', 'json', 'markdown')


def mutant_counts() -> Mapping[str, int]:
    """How many mutants of the project's gallery prove each rule can fail (shipped with the package)."""
    shipped = resources.files('workspace_conformance').joinpath('mutant_counts.json')
    counts: dict[str, int] = json.loads(shipped.read_text()) if shipped.is_file() else {}
    return counts


def _requires(rule: Rule) -> str:
    return ', '.join(rule.requires) or '-'


def _table(catalog: Sequence[Rule]) -> str:
    width = max(len(rule.qualified) for rule in catalog)
    proven = mutant_counts()
    lines = [f'{"rule":<{width}}  {"level":<8}  {"upstream":<8}  {"mutants":<7}  requires']
    lines += [
        f'{rule.qualified:<{width}}  {rule.level:<8}  {"yes" if rule.upstream else "no":<8}  '
        f'{proven.get(rule.id, 0):<7}  {_requires(rule)}'
        for rule in catalog
    ]
    core = sum(rule.level == 'core' for rule in catalog)
    lines.append(f'{len(catalog)} rules ({core} core, {len(catalog) - core} extended)')
    return '\n'.join(lines) + '\n'


def _cell(text: str) -> str:
    return text.replace('|', '\\|')


def _markdown(catalog: Sequence[Rule]) -> str:
    core = sum(rule.level == 'core' for rule in catalog)
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
    ]
    proven = mutant_counts()
    for area in AREAS:
        in_area = [rule for rule in catalog if rule.area == area]
        if not in_area:
            continue
        lines += [
            '',
            f'## {area}',
            '',
            '| rule | level | requires | upstream | mutants | alone | clause |',
            '| --- | --- | --- | --- | --- | --- | --- |',
        ]
        lines += [
            f'| `{rule.id}` | {rule.level} | {_requires(rule)} | {"yes" if rule.upstream else "no"} '
            f'| {proven.get(rule.id, 0)} | {"yes" if rule.runs_alone else "no"} '
            f'| {_cell(rule.clause)} |'
            for rule in in_area
        ]
    return '\n'.join(lines) + '\n'


def render_catalog(catalog: Sequence[Rule], fmt: str) -> str:
    """The catalog in one of `FORMATS`."""
    if fmt == 'json':
        proven = mutant_counts()
        listed = [{**rule.to_dict(), 'mutants': proven.get(rule.id, 0)} for rule in catalog]
        return json.dumps({'version': __version__, 'rules': listed}, indent=2) + '\n'
    if fmt == 'markdown':
        return _markdown(catalog)
    return _table(catalog)


def render_suites(suites: Mapping[str, Sequence[Rule]], fmt: str) -> str:
    """The catalogs of several suites (class name -> rules): JSON rules carry their `suite`, a table one per suite."""
    if fmt == 'json':
        proven = mutant_counts()
        listed = [
            {**rule.to_dict(), 'suite': suite, 'mutants': proven.get(rule.id, 0)}
            for suite, catalog in suites.items()
            for rule in catalog
        ]
        return json.dumps({'version': __version__, 'rules': listed}, indent=2) + '\n'
    if fmt == 'markdown':
        return _markdown([rule for catalog in suites.values() for rule in catalog])
    return '\n'.join(f'{suite}\n{_table(catalog)}' for suite, catalog in suites.items() if catalog)
