"""The pytest plugin: tags each rule's report, records outcomes per rule and anyio backend, prints the verdict.

Inert in a session that runs no conformance rule. Reports carry builtin types only, so pytest-xdist
workers send them to the controller unchanged.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Generator, Mapping
from pathlib import Path
from typing import Any

import pytest

from ..engine.waivers import WAIVERS, WaiverFile
from ..options import FailUnder, output_directory_problem
from ..runtime import emergency
from ..suite import Rule, catalog, clip, hangs_of, overridden_rules, rule_of, unresponsive
from ..vocabulary import BYPASS_CAPABILITIES, OUTCOME_PROPERTY, user_property
from .assemble import assemble, now
from .model import Report, WaiverFileRecord, meets
from .recording import CRASH_PROPERTY, SubjectResults, merge
from .redact import Redactor
from .render.terminal import write_summary
from .write import write_all

__all__ = ('FAIL_UNDER', 'RECORDER_NAME', 'ConformanceRecorder', 'SubjectResults', 'gate_failure', 'runner_hint')

RECORDER_NAME = 'workspace-conformance-recorder'
LONGREPR_LIMIT = 64_000
"""Characters of a failure's traceback, and of each captured output, kept in its report."""
REDACTOR = pytest.StashKey[Redactor]()
PROPERTY = 'workspace_conformance'
CATALOG_PROPERTY = 'workspace_conformance_catalog'
"""The user property carrying a suite class's catalog, on the first report of that class each process sends."""
CATALOG_SENT = pytest.StashKey[set[tuple[str, type]]]()
"""The (subject, class) pairs whose catalog this process has sent (an xdist worker's config is its own)."""
FAIL_UNDER = pytest.StashKey[FailUnder]()
"""The session's verdict gate (`--conformance-fail-under`, ini `conformance_fail_under`), when one is set."""
PERMISSION_RULE = 'permission_denied_uses_builtin_error'
"""The rule that skips as a `runner` gap when the command user bypasses file permissions (root)."""


def pytest_configure(config: pytest.Config) -> None:
    target = config.getoption('conformance_report', default=None)
    if target is not None and not _is_xdist_worker(config):
        problem = output_directory_problem('--conformance-report', str(target))
        if problem is not None:
            raise pytest.UsageError(problem)
    config.pluginmanager.register(ConformanceRecorder(config), RECORDER_NAME)


def _anyio_backend(item: pytest.Item) -> str:
    callspec = getattr(item, 'callspec', None)
    if callspec is not None and 'anyio_backend' in callspec.params:
        return str(callspec.params['anyio_backend'])
    value = getattr(item, 'funcargs', {}).get('anyio_backend')
    return str(value[0] if isinstance(value, tuple) else value or 'asyncio')


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    """Tag the report of a rule with its metadata, as builtin types."""
    report = yield
    meta = rule_of(getattr(item, 'function', None))
    klass = getattr(item, 'cls', None)
    if meta is not None and klass is not None:
        _redact_longrepr(report, item.config)
        report.user_properties.extend(_properties(item, meta, klass))
    return report


def _properties(item: pytest.Item, meta: Rule, klass: type) -> list[tuple[str, dict[str, Any]]]:
    """A rule report's tag, preceded by its class's catalog the first time this process reports on that class."""
    tag = _tag(item, meta, klass)
    sent = item.config.stash.setdefault(CATALOG_SENT, set())
    if (tag['subject'], klass) in sent:
        return [(PROPERTY, tag)]
    sent.add((tag['subject'], klass))
    return [(CATALOG_PROPERTY, _catalog(tag['subject'], klass)), (PROPERTY, tag)]


def _tag(item: pytest.Item, meta: Rule, klass: type) -> dict[str, Any]:
    """What one report says of its rule, loop and fixtures; the class's catalog travels apart, once."""
    return {
        'subject': f'{item.nodeid.split("::")[0]}::{klass.__qualname__}',
        'rule': meta.to_dict(),
        'anyio_backend': _anyio_backend(item),
        **_identity(item),
    }


def _catalog(subject: str, klass: type) -> dict[str, Any]:
    """What a suite class says of all its rules (the catalog, the overridden ones, its summary and loops left out)."""
    return {
        'subject': subject,
        'suite_rules': [{'id': r.id, 'area': r.area, 'level': r.level, 'strength': r.strength} for r in catalog(klass)],
        'overridden': {
            o.rule.id: {
                'area': o.rule.area,
                'level': o.rule.level,
                'strength': o.rule.strength,
                'clause': o.rule.clause,
                'how': o.how,
            }
            for o in overridden_rules(klass)
        },
        'summary': bool(getattr(klass, 'conformance_summary', True)),
        'loops_left_out': {
            str(k): str(v) for k, v in (getattr(klass, 'conformance_loops_left_out', None) or {}).items()
        },
    }


def _redact_longrepr(report: pytest.TestReport, config: pytest.Config) -> None:
    """Keep a failure's traceback and captured output short (a backend's 100 MB output) and free of secrets."""
    redact: Redactor = config.stash.setdefault(REDACTOR, Redactor())
    report.sections = [(title, redact(clip(content, LONGREPR_LIMIT))) for title, content in report.sections]
    if report.longrepr is None or report.skipped:
        return
    text = str(report.longrepr)
    cleaned = redact(clip(text, LONGREPR_LIMIT))
    if cleaned != text:
        crash = getattr(getattr(report.longrepr, 'reprcrash', None), 'message', None)
        if crash:
            report.user_properties.append((CRASH_PROPERTY, redact(clip(str(crash), LONGREPR_LIMIT))))
        report.longrepr = cleaned


def waivers_record(filed: WaiverFile | None) -> WaiverFileRecord | None:
    """The report's record of a run's file of expected failures, or None when it was given none."""
    if filed is None:
        return None
    return WaiverFileRecord(name=filed.name, sha256=filed.sha256, rule_ids=sorted(filed.entries))


def _identity(item: pytest.Item) -> dict[str, Any]:
    """What the item's fixtures say about the backend and its waivers, as builtin types."""
    funcargs: dict[str, Any] = getattr(item, 'funcargs', {})
    found: dict[str, Any] = {}
    backend = funcargs.get('backend')
    if backend is not None:
        kind = type(backend)
        found['backend_class'] = f'{kind.__module__}.{kind.__qualname__}'
        try:
            ref = backend.ref
            found['ref_provider'] = None if ref is None else str(ref.provider)
        except Exception:  # a hostile `ref` must not break reporting
            found['ref_provider'] = None
    claims = funcargs.get('isolation_claims')
    if isinstance(claims, set | frozenset | list | tuple):
        found['isolation_claims'] = sorted(str(claim) for claim in claims)
    for name in ('declared_limits', 'expected_failures'):
        waivers = funcargs.get(name)
        if isinstance(waivers, Mapping):
            found[name] = {str(key): str(value) for key, value in waivers.items()}
    filed = item.config.stash.get(WAIVERS, None)
    meta = rule_of(getattr(item, 'function', None))
    if filed is not None and meta is not None and meta.id in filed.entries:
        found.setdefault('expected_failures', {}).setdefault(meta.id, filed.entries[meta.id])
    return found


class ConformanceRecorder:
    """Collects the tagged reports of a session (the controller's, under xdist) and prints each suite's verdict."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.subjects: dict[str, SubjectResults] = {}
        self.started = now()
        self.report: Report | None = None
        self.interrupted = False
        """Whether the assembled report's run was interrupted (Ctrl-C, a halt): the verdict gate leaves it alone."""
        self.written: list[Path] = []
        self.running: pytest.Item | None = None
        """The item whose protocol runs now, for the report of a run the watchdog has to end."""
        self._unregister = emergency.on_exit(self.write_abandoned)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Generator[None, Any, Any]:
        self.running = item
        try:
            return (yield)
        finally:
            self.running = None

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        """Assemble the report (kept for the CLI) and write it where `--conformance-report` says."""
        if self.subjects and not _is_xdist_worker(self.config):
            interrupted = exitstatus == pytest.ExitCode.INTERRUPTED or session.shouldstop is not False
            self.interrupted = bool(interrupted)
            self._write(interrupted=self.interrupted)
        hangs_of(self.config).watchdog.settle()

    def pytest_unconfigure(self) -> None:
        self._unregister()

    def _write(self, *, interrupted: bool) -> None:
        self.report = assemble(
            self.subjects.values(),
            started=self.started,
            profile=str(self.config.getoption('conformance_profile', default=None) or 'ci'),
            interrupted=interrupted,
            command=list(self.config.invocation_params.args),
            waivers_file=waivers_record(self.config.stash.get(WAIVERS, None)),
        )
        target = self.config.getoption('conformance_report', default=None)
        if target:
            self.written = write_all(self.report, Path(target))

    def write_abandoned(self) -> None:
        """When the process must end at once: fail the rule stuck now, and write the report, marked incomplete."""
        capture = self.config.pluginmanager.getplugin('capturemanager')
        if capture is not None:  # what `emergency.exit_now` says next must reach the terminal
            with contextlib.suppress(Exception):
                capture.suspend_global_capture(in_=True)
        if self.report is not None or _is_xdist_worker(self.config):
            return
        item, hang = self.running, hangs_of(self.config).watchdog.hang
        meta = rule_of(getattr(item, 'function', None))
        klass = getattr(item, 'cls', None)
        if item is not None and hang is not None and meta is not None and klass is not None:
            failure = unresponsive(meta, hang)
            report = pytest.TestReport(
                nodeid=item.nodeid,
                location=item.location,
                keywords={},
                outcome='failed',
                longrepr=f'{type(failure).__name__}: {failure}',
                when='call',
                user_properties=[
                    (OUTCOME_PROPERTY, {'failure': str(failure), 'observed': failure.observed}),
                    *_properties(item, meta, klass),
                ],
            )
            self.pytest_runtest_logreport(report)
        if self.subjects:
            self._write(interrupted=True)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        sent = user_property(report, CATALOG_PROPERTY)
        if isinstance(sent, dict):
            self._remember_catalog(sent)
        found = user_property(report, PROPERTY)
        if not isinstance(found, dict):
            return
        tag: dict[str, Any] = found
        subject = self._subject(tag['subject'])
        subject.backend_class = tag.get('backend_class') or subject.backend_class
        subject.ref_provider = tag.get('ref_provider') or subject.ref_provider
        subject.declared_limits.update(tag.get('declared_limits', {}))
        subject.expected_failures.update(tag.get('expected_failures', {}))
        if 'isolation_claims' in tag:
            subject.isolation_claims = list(tag['isolation_claims'])
        subject.started.add(tag['anyio_backend'])
        key = (tag['rule']['id'], tag['anyio_backend'])
        merged = merge(subject.outcomes.get(key), report, tag)
        if merged is not None:
            subject.outcomes[key] = merged

    def _subject(self, name: str) -> SubjectResults:
        """What is recorded for the suite class `name`, started empty on its first mention."""
        return self.subjects.setdefault(name, SubjectResults(subject=name))

    def _remember_catalog(self, sent: dict[str, Any]) -> None:
        """Keep a suite class's catalog, which each process sends once, with the first report of that class."""
        subject = self._subject(sent['subject'])
        subject.summary = bool(sent.get('summary', True))
        for entry in sent['suite_rules']:
            strength = entry.get('strength', 'must')
            subject.expected.setdefault(entry['id'], (entry['area'], entry['level'], strength))
        subject.overridden.update(sent.get('overridden', {}))
        subject.loops_left_out.update(sent.get('loops_left_out', {}))

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.report is not None:
            hidden = frozenset(subject.subject for subject in self.subjects.values() if not subject.summary)
            listed = next((path for path in self.written if path.name == 'report.json'), None)
            write_summary(terminalreporter, self.report, hidden=hidden, report_file=listed)
            hint = runner_hint(self.report)
            if hint is not None:
                terminalreporter.write_line(hint, yellow=True)
        if self.written:
            terminalreporter.write_line(f'conformance report written to {self.written[0].parent}')


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_sessionfinish(session: pytest.Session) -> Generator[None, None, None]:
    """Once the report is assembled and the summary printed, a verdict below the session's gate exits 1, saying why."""
    result = yield
    gate = session.config.stash.get(FAIL_UNDER, None)
    recorder = session.config.pluginmanager.get_plugin(RECORDER_NAME)
    if gate is None or not isinstance(recorder, ConformanceRecorder) or recorder.report is None:
        return result  # no gate, an xdist worker, or a session that ran no conformance rule
    if recorder.interrupted or session.exitstatus not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
        return result  # an interrupted run, a usage or internal error, too many warnings: its own status stands
    why = gate_failure(recorder.report, gate)
    if why is not None:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
        terminal = session.config.pluginmanager.get_plugin('terminalreporter')
        if terminal is not None:
            terminal.write_line(why, red=True, bold=True)
    return result


def gate_failure(report: Report, gate: FailUnder) -> str | None:
    """The line that fails a session whose verdict is worse than its gate, or `None` when the verdict meets it."""
    if meets(report.verdict, gate.threshold):
        return None
    missing = sum(1 for suite in report.suites for summary in suite.rules if summary.status == 'missing')
    rules = '1 rule has' if missing == 1 else f'{missing} rules have'
    incomplete = f' (the report is incomplete: {rules} no result)' if missing else ''
    return f'workspace-conformance: verdict {report.verdict} is below {gate.setting}{incomplete}'


def runner_hint(report: Report) -> str | None:
    """How to check the permission rule when it is a `runner` gap (file permissions bypassed), else `None`.

    Read from the report's rule summaries; `None` under `certify`, which drops root's override itself unless told
    to keep it (`--keep-capabilities`, or a target that needs it).
    """
    bypassed = any(
        summary.rule_id == PERMISSION_RULE and summary.skip_kind == 'runner'
        for suite in report.suites
        for summary in suite.rules
    )
    if not bypassed:
        return None
    from ..targets.certification import SPEC_ENVIRONMENT  # set while `certify` runs; imported only when needed

    if os.environ.get(SPEC_ENVIRONMENT):
        return None
    rule = f'[files/{PERMISSION_RULE}]'
    if os.geteuid() == 0:
        return (
            f'runner gap: as root, file permissions are bypassed, so {rule} was not checked; run '
            "`workspace-conformance certify` (it drops root's override) or run pytest as another user / under "
            f'`setpriv --bounding-set {BYPASS_CAPABILITIES} --inh-caps {BYPASS_CAPABILITIES} pytest ...`'
        )
    return (
        f"runner gap: the backend's command user bypasses file permissions (root, or CAP_DAC_OVERRIDE), so {rule} "
        'was not checked; run its commands as a user without that override'
    )


def _is_xdist_worker(config: pytest.Config) -> bool:
    return hasattr(config, 'workerinput')
