"""Verified bundles side by side: one row per bundle, per area rules passed of those applicable, as md, html, json.

An advisory (a failed rule that does not bind the subject) is out of its area's fraction and counted apart, in the
row's `advisories`: never a failure, never a pass.

Every bundle is verified first (`verify_bundle`, and `verify_submission` when it is a submission's `bundle/`); one
that fails is refused with one line, and nothing is written. Rows made by different toolkit versions or against
different rule catalogs go in separate groups, each with its own columns. The output depends only on the bundles
and where it is written (links are relative to it): no time of its own, rows and groups in a fixed order.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import jinja2

from .._version import __version__
from .model import Report, Verdict
from .submission import BUNDLE, is_submission, load_submission, verify_submission
from .verify import CHECKSUMS, load_report, verify_bundle

__all__ = (
    'FILES',
    'AreaCount',
    'MatrixError',
    'MatrixGroup',
    'MatrixRow',
    'catalog_hash',
    'find_bundles',
    'group_rows',
    'load_rows',
    'render_html',
    'render_json',
    'render_markdown',
    'row_of',
    'write_matrix',
)

FILES = ('matrix.md', 'matrix.html', 'matrix.json')
MATRIX_SCHEMA_VERSION = 1
_RANK: dict[Verdict, int] = {'certified': 0, 'partial': 1, 'not certified': 2}
_ENVIRONMENT = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined, keep_trailing_newline=True)


class MatrixError(Exception):
    """A path given to `matrix` that holds no bundle: one line saying which and what to pass."""


@dataclass(frozen=True)
class AreaCount:
    """Of one area's rules in a bundle: how many passed, of those that apply to the backend (advisories aside)."""

    passed: int
    applicable: int


@dataclass(frozen=True)
class MatrixRow:
    """One verified bundle, as the matrix shows it."""

    bundle: Path
    subject: str
    toolkit_version: str
    pydantic_ai_version: str
    catalog_hash: str
    rules: int
    event_loops: tuple[str, ...]
    verdict: Verdict
    areas: dict[str, AreaCount]
    declared_limits: tuple[str, ...]
    expected_failures: tuple[str, ...]
    advisories: tuple[str, ...] = ()
    """The rules that are advisories (`area/rule_id`): failed, but they do not bind the subject."""


@dataclass(frozen=True)
class MatrixGroup:
    """Rows of one toolkit version and one rule catalog: they share their columns."""

    toolkit_version: str
    catalog_hash: str
    rules: int
    areas: tuple[str, ...]
    rows: tuple[MatrixRow, ...]


def _is_bundle(directory: Path) -> bool:
    return (directory / 'report.json').is_file() and (directory / CHECKSUMS).is_file()


def find_bundles(paths: Iterable[Path]) -> list[Path]:
    """The bundles `paths` name or hold (a bundle: a directory with report.json and SHA256SUMS), in a fixed order.

    A path that is a directory with a report.json is taken as a bundle (verification then says what it lacks); a
    path that does not exist or holds no bundle raises `MatrixError`.
    """
    found: dict[Path, None] = {}
    for path in paths:
        if not path.is_dir():
            raise MatrixError(f'{path}: no such directory: pass bundles, or directories that hold them')
        if (path / 'report.json').is_file():
            found[path.resolve()] = None
            continue
        inside = sorted(report.parent for report in path.rglob('report.json') if _is_bundle(report.parent))
        if not inside:
            raise MatrixError(f'{path}: holds no bundle (a directory with report.json and {CHECKSUMS})')
        found.update(dict.fromkeys(bundle.resolve() for bundle in inside))
    return sorted(found)


def _problems(bundle: Path) -> list[str]:
    """Verification problems of a bundle, or of the submission whose `bundle/` it is.

    A bundle another toolkit version made is checked as far as this one can (hashes, every verdict recomputed from
    the results) and goes in a group of its own: that `verify` cannot check it against this version's catalog is
    not a problem here.
    """
    if bundle.name == BUNDLE and is_submission(bundle.parent):
        problems = verify_submission(bundle.parent)
    else:
        problems = verify_bundle(bundle)
    try:
        made_by = load_report(bundle / 'report.json').toolkit_version
    except ValueError:
        return problems
    other_version = f'report.json: made by workspace-conformance {made_by}, this is {__version__}: '
    return [problem for problem in problems if not problem.removeprefix(f'{BUNDLE}/').startswith(other_version)]


def catalog_hash(report: Report) -> tuple[str, int]:
    """A short hash of the rules the report ran (area, id, level, clause), and how many there are."""
    rules = sorted(
        {
            (result.area, result.rule_id, result.level, result.clause)
            for suite in report.suites
            for result in suite.results
        }
    )
    digest = hashlib.sha256(json.dumps(rules).encode()).hexdigest()[:12]
    return digest, len(rules)


def _subject(bundle: Path, report: Report) -> str:
    if bundle.name == BUNDLE and is_submission(bundle.parent):
        submission, _ = load_submission(bundle.parent)
        if submission is not None:
            return f'{submission.organization}/{submission.project}'
    for suite in report.suites:
        named = suite.subject.rpartition('[')[2].rstrip(']')
        if '[' in suite.subject and named:
            return named
    return report.suites[0].backend_class or report.suites[0].subject if report.suites else bundle.name


def row_of(bundle: Path, report: Report) -> MatrixRow:
    """The matrix row of a bundle's report: per area the rules passed and applicable, its waivers, its catalog."""
    areas: dict[str, list[int]] = {}
    for suite in report.suites:
        for rule in suite.rules:
            count = areas.setdefault(rule.area, [0, 0])
            count[0] += rule.status == 'passed'
            count[1] += rule.status not in ('not-applicable', 'advisory')
    digest, rules = catalog_hash(report)
    return MatrixRow(
        bundle=bundle,
        subject=_subject(bundle, report),
        toolkit_version=report.toolkit_version,
        pydantic_ai_version=report.pydantic_ai_version,
        catalog_hash=digest,
        rules=rules,
        event_loops=tuple(sorted({loop for suite in report.suites for loop in suite.anyio_backends})),
        verdict=report.verdict,
        areas={area: AreaCount(passed, applicable) for area, (passed, applicable) in sorted(areas.items())},
        declared_limits=tuple(sorted({w.rule_id for suite in report.suites for w in suite.declared_limits})),
        expected_failures=tuple(sorted({w.rule_id for suite in report.suites for w in suite.expected_failures})),
        advisories=tuple(
            sorted({f'{r.area}/{r.rule_id}' for suite in report.suites for r in suite.rules if r.status == 'advisory'})
        ),
    )


def load_rows(bundles: Sequence[Path]) -> tuple[list[MatrixRow], list[str]]:
    """A row per bundle that verifies, and one line per bundle refused: which, what failed, what to run."""
    rows, refused = [], []
    for bundle in bundles:
        problems = _problems(bundle)
        if problems:
            more = f' (and {len(problems) - 1} more)' if len(problems) > 1 else ''
            target = bundle.parent if bundle.name == BUNDLE and is_submission(bundle.parent) else bundle
            refused.append(
                f'{bundle}: refused, it does not verify: {problems[0]}{more}; see workspace-conformance verify {target}'
            )
            continue
        rows.append(row_of(bundle, load_report(bundle / 'report.json')))
    return rows, refused


def group_rows(rows: Iterable[MatrixRow]) -> list[MatrixGroup]:
    """Rows grouped by toolkit version and catalog, groups and rows in a fixed order (verdict, subject, path)."""
    groups: dict[tuple[str, str], list[MatrixRow]] = {}
    for row in rows:
        groups.setdefault((row.toolkit_version, row.catalog_hash), []).append(row)
    return [
        MatrixGroup(
            toolkit_version=version,
            catalog_hash=digest,
            rules=members[0].rules,
            areas=tuple(sorted({area for row in members for area in row.areas})),
            rows=tuple(sorted(members, key=lambda row: (_RANK[row.verdict], row.subject, str(row.bundle)))),
        )
        for (version, digest), members in sorted(groups.items())
    ]


def _link(row: MatrixRow, base: Path, name: str = 'report.html') -> str:
    return Path(os.path.relpath(row.bundle / name, base.resolve())).as_posix()


def _cell(text: str) -> str:
    return text.replace('|', '\\|').replace('\n', ' ')


def _count(count: AreaCount | None) -> str:
    if count is None:
        return '-'
    return f'{count.passed}/{count.applicable}' if count.applicable else 'n/a'


def _waivers(row: MatrixRow, ids: tuple[str, ...], base: Path, status: str = 'gap') -> str:
    return f'[{len(ids)}]({_link(row, base)}#status={status})' if ids else '0'


def _heading(group: MatrixGroup) -> str:
    return f'workspace-conformance {group.toolkit_version}, catalog {group.catalog_hash} ({group.rules} rules)'


def render_markdown(groups: Sequence[MatrixGroup], base: Path) -> str:
    """The matrix as Markdown, one table per group; links are relative to `base`, where the file goes."""
    lines = [
        '# Conformance matrix',
        '',
        'One row per bundle, each verified first (`workspace-conformance verify`). Per area: the rules that passed, '
        'of those that apply to the backend (n/a: none applies); advisories (failed rules that do not bind the '
        "subject) are counted apart. Declared limits and expected failures link to the report's gaps. "
        'Bundles made by different toolkit versions or against different rule catalogs are in separate tables.',
    ]
    for group in groups:
        header = [
            'subject',
            'verdict',
            'event loops',
            'pydantic-ai',
            'toolkit',
            'catalog',
            *group.areas,
            'advisories',
            'declared limits',
            'expected failures',
        ]
        lines += ['', f'## {_heading(group)}', '', '| ' + ' | '.join(header) + ' |', '|' + ' --- |' * len(header)]
        for row in group.rows:
            cells = [
                f'[{_cell(row.subject)}]({_link(row, base)})',
                f'**{row.verdict}**',
                ', '.join(row.event_loops),
                row.pydantic_ai_version,
                row.toolkit_version,
                f'`{row.catalog_hash}`',
                *(_count(row.areas.get(area)) for area in group.areas),
                _waivers(row, row.advisories, base, 'advisory'),
                _waivers(row, row.declared_limits, base),
                _waivers(row, row.expected_failures, base),
            ]
            lines.append('| ' + ' | '.join(cells) + ' |')
    return '\n'.join(lines) + '\n'


def render_json(groups: Sequence[MatrixGroup], base: Path) -> str:
    """The matrix as JSON: its groups, each with its areas and rows; bundle paths are relative to `base`."""
    data = {
        'schema_version': MATRIX_SCHEMA_VERSION,
        'groups': [
            {
                'toolkit_version': group.toolkit_version,
                'catalog_hash': group.catalog_hash,
                'rules': group.rules,
                'areas': list(group.areas),
                'rows': [
                    {
                        'bundle': Path(os.path.relpath(row.bundle, base.resolve())).as_posix(),
                        'report': _link(row, base),
                        'subject': row.subject,
                        'toolkit_version': row.toolkit_version,
                        'pydantic_ai_version': row.pydantic_ai_version,
                        'catalog_hash': row.catalog_hash,
                        'event_loops': list(row.event_loops),
                        'verdict': row.verdict,
                        'areas': {
                            area: {'passed': count.passed, 'applicable': count.applicable}
                            for area, count in row.areas.items()
                        },
                        'advisories': list(row.advisories),
                        'declared_limits': list(row.declared_limits),
                        'expected_failures': list(row.expected_failures),
                    }
                    for row in group.rows
                ],
            }
            for group in groups
        ],
    }
    return json.dumps(data, indent=2) + '\n'


def render_html(groups: Sequence[MatrixGroup], base: Path) -> str:
    """The matrix as one self-contained page, filterable by verdict (rows) and area (columns), also from the URL."""
    source = resources.files(f'{__package__}.render').joinpath('matrix.html.j2').read_text()
    verdicts = sorted({row.verdict for group in groups for row in group.rows}, key=_RANK.__getitem__)
    return _ENVIRONMENT.from_string(source).render(
        groups=groups,
        heading=_heading,
        link=lambda row: _link(row, base),
        areas=sorted({area for group in groups for area in group.areas}),
        verdicts=verdicts or list(_RANK),
        bundles=sum(len(group.rows) for group in groups),
    )


def write_matrix(groups: Sequence[MatrixGroup], out: Path) -> list[Path]:
    """Write matrix.md, matrix.html and matrix.json into `out` (made if missing); the paths written."""
    out.mkdir(parents=True, exist_ok=True)
    texts = dict(
        zip(FILES, (render_markdown(groups, out), render_html(groups, out), render_json(groups, out)), strict=True)
    )
    for name, text in texts.items():
        (out / name).write_text(text)
    return [out / name for name in FILES]
