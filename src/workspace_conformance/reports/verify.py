"""Check a report bundle: hashes, verdicts recomputed from the results, completeness against the rule catalog."""

from __future__ import annotations

import hashlib
from pathlib import Path

from pydantic import ValidationError

from .._version import __version__
from ..capability import capability_rules
from ..suite import Rule, rules
from ..tools import tool_rules
from .model import Report, RuleSummary, SuiteReport, overall_verdict, summarize, verdict_of

__all__ = ('CHECKSUMS', 'WAIVERS_COPY', 'catalog_of', 'checksums', 'load_report', 'overridden_in', 'verify_bundle')

CHECKSUMS = 'SHA256SUMS'
WAIVERS_COPY = 'expected-failures.yaml'
"""The bundle's copy of the file of expected failures its run was given."""


def checksums(directory: Path) -> str:
    """`sha256sum`-format lines for every file in `directory` but the checksum file itself."""
    lines = [
        f'{hashlib.sha256(path.read_bytes()).hexdigest()}  {path.name}'
        for path in sorted(directory.iterdir())
        if path.is_file() and path.name != CHECKSUMS
    ]
    return '\n'.join(lines) + '\n'


def load_report(path: Path) -> Report:
    """Read and validate a report.json; a `ValueError` with one line saying what is wrong otherwise."""
    try:
        return Report.model_validate_json(path.read_bytes())
    except FileNotFoundError:
        raise ValueError(f'{path}: no such file') from None
    except OSError as error:  # a directory, unreadable, ...
        raise ValueError(f'{path}: cannot read it ({error.strerror or error}): pass a report.json file') from None
    except ValidationError as error:
        first = error.errors()[0]
        where = '.'.join(str(part) for part in first['loc'])
        raise ValueError(f'{path}: not a workspace-conformance report ({where}: {first["msg"]})') from None


def _hash_problems(directory: Path) -> list[str]:
    listed = directory / CHECKSUMS
    if not listed.is_file():
        return [f'{CHECKSUMS}: missing, so the files cannot be checked']
    problems = []
    try:
        text = listed.read_bytes().decode('utf-8', errors='replace')
    except OSError as error:
        return [f'{CHECKSUMS}: cannot read it ({error.strerror or error}), so the files cannot be checked']
    for line in text.splitlines():
        digest, _, name = line.partition('  ')
        path = directory / name
        if not name or '/' in name or name in ('.', '..'):
            problems.append(f'{CHECKSUMS}: {name!r} is not the name of a file in the bundle')
        elif not path.is_file():
            problems.append(f'{name}: listed in {CHECKSUMS} but missing')
        elif hashlib.sha256(path.read_bytes()).hexdigest() != digest:
            problems.append(f'{name}: its SHA-256 does not match {CHECKSUMS} (the file was changed)')
    return problems


def catalog_of(suite: SuiteReport) -> dict[str, Rule]:
    """The catalog a suite's results are checked against: the capability or tool suite's when it ran only theirs."""
    backend = {rule.id: rule for rule in rules()}
    ran = {result.rule_id for result in suite.results}
    for other in ({rule.id: rule for rule in capability_rules()}, {rule.id: rule for rule in tool_rules()}):
        if ran & other.keys() and not ran & backend.keys():
            return other
    return backend


def _report_problems(report: Report, name: str) -> list[str]:
    problems = []
    current = report.toolkit_version == __version__
    if not current:
        problems.append(
            f'{name}: made by workspace-conformance {report.toolkit_version}, this is {__version__}: '
            f'install that version to check completeness against its rule catalog'
        )
    for suite in report.suites:
        catalog = catalog_of(suite) if current else None
        recomputed = {summary.rule_id: summary for summary in summarize(suite.results)}
        for recorded in suite.rules:
            again = recomputed.get(recorded.rule_id)
            if again is None:
                problems.append(f'{name}: rule {recorded.rule_id}: listed with no result behind it')
            elif (again.status, again.skip_kind) != (recorded.status, recorded.skip_kind):
                problems.append(
                    f'{name}: rule {recorded.rule_id}: recorded as {_kind(recorded)}, '
                    f'but its results say {_kind(again)}'
                )
            elif again.strength != recorded.strength:
                problems.append(
                    f'{name}: rule {recorded.rule_id}: recorded as {recorded.strength}, '
                    f'but its results say {again.strength}'
                )
        if verdict_of(recomputed.values()) != suite.verdict:
            problems.append(
                f'{name}: suite {suite.subject}: verdict {suite.verdict!r} does not follow from its results'
            )
        if catalog is not None:
            for rule_id in sorted(set(catalog) - set(recomputed)):
                problems.append(f'{name}: rule {rule_id}: in the catalog of {__version__} but has no result')
            for backend in suite.anyio_backends:
                ran = {result.rule_id for result in suite.results if result.anyio_backend == backend}
                for rule_id in sorted(set(catalog) - ran):
                    problems.append(f'{name}: rule {rule_id}: no result on {backend}')
        problems += _strength_problems(suite, catalog if report.schema_version >= 2 else None, name)
        for result in suite.results:
            if result.outcome == 'missing':
                problems.append(f'{name}: rule {result.rule_id}: no result on {result.anyio_backend}')
    if not report.complete:
        problems.append(f'{name}: the run is marked incomplete (interrupted, or rules without a result)')
    expected = overall_verdict(report.suites, complete=report.complete)
    if expected != report.verdict:
        problems.append(f'{name}: overall verdict {report.verdict!r} does not follow from the suites ({expected!r})')
    return problems


def _strength_problems(suite: SuiteReport, catalog: dict[str, Rule] | None, name: str) -> list[str]:
    """An advisory recorded for a `must` rule, or a strength other than the catalog's (schema 2 reports)."""
    problems: list[str] = []
    for result in suite.results:
        if result.outcome == 'advisory' and result.strength == 'must':
            problems.append(
                f'{name}: rule {result.rule_id}: an advisory on {result.anyio_backend}, but it is a must rule'
            )
        known = catalog.get(result.rule_id) if catalog is not None else None
        if known is not None and known.strength != result.strength:
            problems.append(
                f'{name}: rule {result.rule_id}: recorded as {result.strength}, but the catalog says {known.strength}'
            )
    return problems


def _kind(summary: RuleSummary) -> str:
    return f'{summary.status} ({summary.skip_kind})' if summary.skip_kind else summary.status


def overridden_in(report: Report) -> list[str]:
    """The rules a subclass overrode, as `area/rule_id`, for the line `verify` prints."""
    return sorted(
        {
            f'{rule.area}/{rule.rule_id}'
            for suite in report.suites
            for rule in suite.rules
            if rule.skip_kind == 'overridden'
        }
    )


def verify_bundle(directory: Path) -> list[str]:
    """Every problem found in a bundle, one line each (`file: rule: what`); empty when it verifies."""
    problems = _hash_problems(directory)
    try:
        report = load_report(directory / 'report.json')
    except ValueError as error:
        return [*problems, str(error)]
    return problems + _waivers_problems(directory, report) + _report_problems(report, 'report.json')


def _waivers_problems(directory: Path, report: Report) -> list[str]:
    """Whether the bundle holds the file of expected failures its report records, byte for byte."""
    record = report.expected_failures_file
    if record is None:
        return []
    copy = directory / WAIVERS_COPY
    if not copy.is_file():
        return [f'{WAIVERS_COPY}: missing, though report.json records the run was given {record.name}']
    if hashlib.sha256(copy.read_bytes()).hexdigest() != record.sha256:
        return [f'{WAIVERS_COPY}: its SHA-256 is not the one report.json records for {record.name}']
    return []
