"""Running a certification: check a `CertifyRequest`, run its rules in a pytest session, state and return the verdict.

The command line (`cli.py`) parses `certify`'s options into a `CertifyRequest` and calls `certify`; everything after
that happens here: the checks argparse cannot make, the target's resolution and preflight, the run directory, the
pytest session, the report of a run stopped early, the bundle's extras and the one verdict line.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import os
import signal
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import hypothesis.configuration
import pytest

from .capability import capability_rules
from .engine.waivers import WaiverFile, unknown_ids
from .isolation import isolation_rules
from .options import keyword_problem, output_directory_problem
from .reports.assemble import assemble, now
from .reports.bundle import write_bundle_extras
from .reports.plugin import RECORDER_NAME, ConformanceRecorder, waivers_record
from .reports.recording import SubjectResults
from .reports.redact import Redactor
from .reports.write import write_all
from .runtime import emergency
from .runtime.interrupts import cleaning_up, signals_stop_the_run, stopped_by, terminated_status
from .runtime.leftovers import StaleRun, remove_stale_runs, run_directory
from .runtime.privileges import announce_dropped_capabilities, drop_bypass_capabilities
from .suite import rules
from .targets import NAMED_TARGETS, CertificationSpec, TargetError, TargetNotRunnable, resolve_target
from .targets.base import Target
from .targets.certification import GENERATED_MODULE, SPEC_ENVIRONMENT
from .targets.isolation import OWN_CLAIMS, claims_option
from .targets.listing import write_not_run
from .targets.loading import resolve_capability, resolve_tools
from .targets.preflight import preflight
from .tools import tool_rules

__all__ = (
    'EXIT_CERTIFIED',
    'EXIT_NOT_CERTIFIED',
    'EXIT_NOT_RUN',
    'EXIT_USAGE',
    'CertifyRequest',
    'certify',
    'fail',
    'say',
)

EXIT_CERTIFIED, EXIT_NOT_CERTIFIED, EXIT_USAGE, EXIT_NOT_RUN = 0, 1, 2, 3


@dataclass(frozen=True, kw_only=True)
class CertifyRequest:
    """What `certify` was asked to do: each field is one of its command-line options, parsed; defaults are the CLI's."""

    target: str | None = None
    """TARGET: a named target or package.module:factory; None means `local`, or the tool suite alone with `tools`."""
    fresh: str | None = None
    """`--fresh MODULE:FACTORY`: builds an unconnected backend."""
    attach: str | None = None
    """`--attach MODULE:FACTORY`: factory(ref) building a backend attached by ref."""
    destroy: str | None = None
    """`--destroy MODULE:FUNCTION`: async function(backend) destroying its environment."""
    stop: str | None = None
    """`--stop MODULE:FUNCTION`: async function(backend) killing its environment's init, its files kept."""
    start: str | None = None
    """`--start MODULE:FUNCTION`: async function(backend) starting that stopped environment again."""
    inject_fault: str | None = None
    """`--inject-fault MODULE:FUNCTION`: function(backend, kind) arming one fault in the backend's SDK client."""
    capability: str | None = None
    """`--capability`: `target` for the target's own capability, or package.module:factory; None for none."""
    tools: str | None = None
    """`--tools`: a named tool target or package.module:factory; None for no tool suite."""
    isolation: str | None = None
    """`--isolation`: `target` for the target's own claims, or CLAIMS as given; None for no isolation suite."""
    claims: tuple[str, ...] | None = None
    """`--claims`: what the tool capability claims beyond the contract; None when not given."""
    keyword: str | None = None
    """`-k EXPR`: only the rules matching this pytest -k expression."""
    workers: str | None = None
    """`-n N`: pytest-xdist workers (a number or `auto`)."""
    time_scale: float | None = None
    """`--conformance-time-scale`: the multiplier of every hang guard and wait."""
    concurrency: int | str | None = None
    """`--conformance-concurrency`: rules checked at once (`auto` or a number)."""
    max_duration: float | None = None
    """`--conformance-max-duration`: seconds after which the run ends, incomplete."""
    rebuild_per_call: bool = False
    """`--conformance-rebuild-per-call`: every backend operation goes to a backend rebuilt from the ref."""
    profile: str = 'certify'
    """`--conformance-profile`: the Hypothesis profile of the generated cases."""
    expected_failures: WaiverFile | None = None
    """`--expected-failures FILE`, read: rule id -> reason, each run as a strict expected failure."""
    report: str | None = None
    """`--report DIR`: where the report files go."""
    bundle: str | None = None
    """`--bundle DIR`: where the report files and the bundle's extras go."""
    require: bool = False
    """`--require`: a named target that cannot run here is not certified (1), not not run (3)."""
    keep_capabilities: bool = False
    """`--keep-capabilities`: as root, keep the capabilities that bypass file permissions."""
    anyio_backend: str = 'all'
    """`--anyio-backend`: asyncio, trio, or all (those installed, the preflight may leave some out)."""
    verbose: bool = False
    """`-v`: pytest's own output too."""
    tbstyle: str | None = None
    """`--tb STYLE`: pytest's traceback of each failure too, in this style."""
    target_options: Mapping[str, str | None] = field(default_factory=dict)
    """The named targets' options (`--NAME VALUE`) by name, None for those not given."""


def certify(request: CertifyRequest, argv: Sequence[str] | None = None) -> int:
    """Certify what `request` names in a pytest session of its own, say the verdict, and return its exit status.

    `argv` is the command line after the program's name (None: `sys.argv`'s), for the setpriv re-exec and the bundle's
    REPRODUCE.md. A signal outside the session (Ctrl-C, SIGTERM) raises KeyboardInterrupt for the caller to state.
    """
    with _importable_from_here(request):
        ran = _run_certification(request, argv)
        return ran if isinstance(ran, int) else _certification_verdict(request, argv, ran)


def say(message: str) -> None:
    """Write one line to stderr, with the runner's secrets (a key in a factory's error) redacted."""
    sys.stderr.write(f'workspace-conformance: {Redactor()(message)}\n')


def fail(message: str) -> int:
    """Say `message` (what is wrong with the command line) and return the usage status, `EXIT_USAGE`."""
    say(message)
    return EXIT_USAGE


def _say_removed(removed: list[StaleRun]) -> None:
    """One line naming the directories (and processes) of dead runs `certify` removed before it ran."""
    if removed:
        listed = '; '.join(stale.describe() for stale in removed)
        say(f'removed what {len(removed)} killed run(s) left: {listed}')


def _not_run(request: CertifyRequest, error: TargetNotRunnable) -> int:
    """A named target that cannot run here: say why, keep the reason in the report directory, never pass."""
    redact = Redactor()
    sys.stdout.write(f'workspace-conformance: {redact(str(error))}\n')
    output = request.bundle or request.report
    if output:
        write_not_run(Path(output), error.target, redact(error.reason))
    return EXIT_NOT_CERTIFIED if request.require else EXIT_NOT_RUN


def _clean_up(target: Target, run_root: Path) -> None:
    """Remove what the run created outside its scratch directory; a failure is reported, never raised."""
    if target.cleanup is None:
        return
    try:
        target.cleanup(run_root)
    except Exception as error:
        say(f'cleanup of {target.name} failed: {type(error).__name__}: {error}')


def _anyio_backends(choice: str) -> tuple[str, ...] | str:
    """The event loops `--anyio-backend` chooses among those installed, or the line saying trio is missing."""
    has_trio = importlib.util.find_spec('trio') is not None
    if choice == 'trio' and not has_trio:
        return 'trio is not installed: pip install "workspace-conformance[trio]", or pass --anyio-backend asyncio'
    if choice == 'all':
        return ('asyncio', 'trio') if has_trio else ('asyncio',)
    return (choice,)


def _factory_specs(request: CertifyRequest) -> list[str]:
    """The command's `package.module:attribute` arguments: target, --fresh, --attach, --destroy, --capability, ..."""
    specs = [request.target, request.fresh, request.attach, request.destroy, request.stop, request.start]
    specs.append(request.inject_fault)
    specs += [request.capability, request.tools]
    return [spec for spec in specs if isinstance(spec, str) and ':' in spec]


@contextlib.contextmanager
def _importable_from_here(request: CertifyRequest) -> Iterator[None]:
    """While `certify` runs, module:factory specs import from the current directory too, as under `python -m`.

    The directory goes first on `sys.path` and on `PYTHONPATH` (for pytest-xdist workers and the setpriv re-exec);
    both are restored afterwards.
    """
    here = os.getcwd()
    if not _factory_specs(request) or here in sys.path:
        yield
        return
    saved_path, saved_variable = list(sys.path), os.environ.get('PYTHONPATH')
    sys.path.insert(0, here)
    os.environ['PYTHONPATH'] = os.pathsep.join(part for part in (here, saved_variable) if part)
    try:
        yield
    finally:
        sys.path[:] = saved_path
        if saved_variable is None:
            os.environ.pop('PYTHONPATH', None)
        else:
            os.environ['PYTHONPATH'] = saved_variable


def _import_paths(request: CertifyRequest) -> list[str]:
    """The directories on sys.path that hold the modules of the command's package.module:factory arguments.

    Those a bundle's REPRODUCE.md puts on PYTHONPATH; an installed module (under site-packages) needs none.
    """
    paths: list[str] = []
    for spec in _factory_specs(request):
        module_name = spec.partition(':')[0]
        module = sys.modules.get(module_name)
        file = getattr(module, '__file__', None)
        if not file:
            continue
        root = Path(file).resolve().parent
        for _ in range(module_name.count('.') + (1 if Path(file).name == '__init__.py' else 0)):
            root = root.parent
        if 'site-packages' not in root.parts and 'dist-packages' not in root.parts and str(root) not in paths:
            paths.append(str(root))
    return paths


def _waivers_path(request: CertifyRequest) -> Path | None:
    """The file of expected failures `certify` was given, for its bundle to hold."""
    return None if request.expected_failures is None else Path(request.expected_failures.path)


def _write_unstarted(request: CertifyRequest, name: str, loops: tuple[str, ...], argv: Sequence[str] | None) -> None:
    """The report of a run stopped before its first rule: incomplete, every rule `missing` (if one was asked for)."""
    output = request.bundle or request.report
    if not output:
        return
    subject = SubjectResults(subject=f'test_certification.py::TestCertification[{name}]', started=set(loops))
    subject.expected.update({rule.id: (rule.area, rule.level, rule.strength) for rule in rules()})
    command = [*sys.argv[:1], *(sys.argv[1:] if argv is None else argv)]
    report = assemble(
        [subject],
        started=now(),
        profile=request.profile,
        interrupted=True,
        command=command,
        waivers_file=waivers_record(request.expected_failures),
    )
    write_all(report, Path(output))
    if request.bundle:
        write_bundle_extras(Path(request.bundle), report, command, _import_paths(request), _waivers_path(request))


def _session(pytest_args: list[str], plugins: list[object]) -> int:
    """The pytest session of a certification; returns its exit status."""
    return int(pytest.main(pytest_args, plugins=plugins))


def _output_options(request: CertifyRequest) -> list[str]:
    """Pytest's output options: quiet, no per-failure sections or short summary (the summary's blocks say it all).

    `-v` or `--tb STYLE` bring pytest's own failure sections and its list of failed items back.
    """
    if not request.verbose and request.tbstyle is None:
        return ['-q', '--tb=no', '-rN']
    return ['-v' if request.verbose else '-q', f'--tb={request.tbstyle or "auto"}', '-rfE']


def _certify_problem(request: CertifyRequest, loops: tuple[str, ...]) -> str | None:
    """What is wrong with `certify`'s options beyond what argparse checks, found before anything runs and writes."""
    if request.report and request.bundle:
        return '--report and --bundle: pass one (--bundle DIR writes the report files too)'
    for option, value in (('--report', request.report), ('--bundle', request.bundle)):
        if value is not None:
            problem = output_directory_problem(option, value)
            if problem is not None:
                return problem
    if request.isolation is not None:
        problem = _isolation_problem(request)
        if problem is not None:
            return problem
    if request.claims is not None and request.tools is None:
        return '--claims says what a tool capability claims: use it with --tools MODULE:FACTORY'
    selectable = (
        *(rules() if request.target is not None or request.tools is None else ()),
        *(capability_rules() if request.capability is not None else ()),
        *(tool_rules() if request.tools is not None else ()),
        *(isolation_rules() if request.isolation is not None else ()),
    )
    if request.expected_failures is not None:
        problem = unknown_ids(
            f'--expected-failures {request.expected_failures.path}',
            request.expected_failures.entries,
            {rule.id for rule in selectable},
        )
        if problem is not None:
            return problem
    if request.keyword is not None:
        return keyword_problem(request.keyword, (f'test_{rule.id}' for rule in selectable), loops)
    return None


def _say_claims(target: Target) -> None:
    """One line: the isolation the target claims (`--isolation` checks it) and where its provider documents it."""
    claims = ', '.join(sorted(target.isolation_claims)) or 'no isolation'
    say(f'{target.name} claims {claims}: {target.isolation_source or "its provider documents no isolation"}')


def _isolation_problem(request: CertifyRequest) -> str | None:
    """What is wrong with `--isolation` here: no TARGET beside `--tools`, a target name given as CLAIMS, bad claims."""
    given = request.isolation
    if given is None:  # no --isolation: nothing to check
        return None
    if request.tools is not None and request.target is None:
        return "--isolation checks a TARGET's sandbox: name one (certify TARGET --isolation --tools ...)"
    if given in NAMED_TARGETS or ':' in given:
        return f'--isolation took {given!r} as its CLAIMS: put TARGET first (certify {given} --isolation)'
    try:
        claims_option(given)
    except TargetError as error:
        return str(error)
    return None


class _RecorderCapture:
    """Keeps the session's recorder after pytest has finished, so `certify` can state the verdict."""

    recorder: ConformanceRecorder | None = None

    @pytest.hookimpl(trylast=True)
    def pytest_unconfigure(self, config: pytest.Config) -> None:
        self.recorder = config.pluginmanager.get_plugin(RECORDER_NAME)


def _preflight(
    request: CertifyRequest, target: Target, loops: tuple[str, ...], environments: Path
) -> tuple[tuple[str, ...], dict[str, str], bool] | None:
    """A factory target's loops after its preflight, those left out and why, and whether its factory is awaited.

    None, said in one line, when the backend works on no loop. Loops are left out only when the user let certify
    choose them (`--anyio-backend all`, the default).
    """
    if request.target is None or request.target in NAMED_TARGETS:  # named targets check their requirements themselves
        return loops, {}, False
    found = preflight(
        target, loops, environments, scale=request.time_scale or 1.0, choose=request.anyio_backend == 'all'
    )
    for trial in found.trials:
        if trial.cleanup:
            say(f'cleaning up the preflight backend on {trial.loop}: {trial.cleanup}')
    if found.failure is not None:
        say(found.failure)
        return None
    for line in found.lines():
        say(line)
    return found.loops, found.left_out, found.awaits


@dataclass(frozen=True)
class _Ran:
    """What a certification's pytest session left for its verdict: its status, the recorder, the target and loops."""

    status: int
    recorder: ConformanceRecorder | None
    target: str
    loops: tuple[str, ...]


def _certification_arguments(
    request: CertifyRequest,
    run_dir: Path,
    preflown: tuple[tuple[str, ...], dict[str, str], bool],
) -> tuple[CertificationSpec, list[str]]:
    """The spec the generated test module reads, and the arguments of the pytest session that runs it.

    `preflown` is what the preflight found: the loops to run, those left out and why, and whether the factory awaits.
    """
    loops, left_out, awaits = preflown
    spec = CertificationSpec(
        target=request.target,
        run_dir=str(run_dir / 'environments'),
        anyio_backends=loops,
        fresh=request.fresh,
        attach=request.attach,
        destroy=request.destroy,
        stop=request.stop,
        start=request.start,
        inject_fault=request.inject_fault,
        options={name: value for name, value in request.target_options.items() if value is not None},
        run_id=run_dir.name,
        capability=request.capability,
        tools=request.tools,
        isolation=request.isolation,
        claims=request.claims,
        loops_left_out=left_out,
        awaits=awaits,
    )
    tests = run_dir / 'suite'
    pytest_args = [
        str(tests),
        *_output_options(request),
        '--no-header',
        '-p',
        'no:cacheprovider',
        '-W',
        'ignore::pytest.PytestAssertRewriteWarning',
        '--rootdir',
        str(tests),
        # pytest's own temporary directories (kept for three runs by default) go in the run's, not in TMPDIR.
        '--basetemp',
        str(run_dir / 'pytest'),
        '-c',
        str(tests / 'pytest.ini'),
    ]
    if request.keyword:
        pytest_args += ['-k', request.keyword]
    if request.workers:
        pytest_args += ['-n', str(request.workers)]
    if request.time_scale is not None:
        pytest_args += ['--conformance-time-scale', str(request.time_scale)]
    if request.concurrency is not None:
        pytest_args += ['--conformance-concurrency', str(request.concurrency)]
    if request.max_duration is not None:
        pytest_args += ['--conformance-max-duration', str(request.max_duration)]
    if request.rebuild_per_call:
        pytest_args.append('--conformance-rebuild-per-call')
    pytest_args += ['--conformance-profile', request.profile]
    if request.expected_failures is not None:
        pytest_args += ['--conformance-expected-failures', request.expected_failures.path]
    output = request.bundle or request.report
    if output:
        pytest_args += ['--conformance-report', str(Path(output).resolve())]
    return spec, pytest_args


def _run_certification(request: CertifyRequest, argv: Sequence[str] | None) -> int | _Ran:
    """Check the request, resolve and preflight the target, then run the rules; an exit status when it stops early."""
    backends = _anyio_backends(request.anyio_backend)
    if isinstance(backends, str):
        return fail(backends)
    if request.workers and importlib.util.find_spec('xdist') is None:
        return fail('-n needs pytest-xdist: pip install "workspace-conformance[xdist]"')
    problem = _certify_problem(request, backends)
    if problem is not None:
        return fail(problem)
    _say_removed(remove_stale_runs())
    resolve = functools.partial(
        resolve_target,
        request.target,
        options=request.target_options,
        fresh=request.fresh,
        attach=request.attach,
        destroy=request.destroy,
        stop=request.stop,
        start=request.start,
        inject_fault=request.inject_fault,
    )
    emergency.set_status(EXIT_NOT_CERTIFIED)  # a run the watchdog has to end is not certified
    try:
        checked = resolve()  # a factory target is imported here, and built in the preflight
        if request.capability is not None:  # built once, so a factory that returns no capability fails here
            with run_directory('workspace-conformance-check-') as check_dir:
                resolve_capability(request.capability, checked)(Path(check_dir) / 'capability')
        if request.tools is not None:  # built once, so a factory that returns no capability fails here
            resolve_tools(request.tools).build()
    except TargetNotRunnable as error:
        return _not_run(request, error)
    except TargetError as error:
        return fail(str(error))
    named = NAMED_TARGETS.get(request.target or 'local')
    if not request.keep_capabilities and not (named and named.keeps_capabilities):
        drop_bypass_capabilities(argv)
    # The run's directory, and every process working in it, go when the run ends: also on Ctrl-C, SIGTERM or SIGHUP
    # (a second one exits at once, still cleaning up) and when the watchdog has to end a run whose backend ignores
    # cancellation.
    with signals_stop_the_run(), run_directory('workspace-conformance-', while_cleaning=cleaning_up) as run_dir:
        target = resolve(run_id=run_dir.name, check_requirements=False)
        loops = tuple(loop for loop in backends if loop in target.event_loops)
        if request.isolation == OWN_CLAIMS:
            _say_claims(target)
        if not loops:
            return fail(f'target {target.name!r} runs only on {", ".join(target.event_loops)}: pass --anyio-backend')
        environments = run_dir / 'environments'
        unregister = emergency.on_exit(lambda: _clean_up(target, environments))
        try:
            checked_loops = _preflight(request, target, loops, environments)
        except KeyboardInterrupt:  # a signal during the preflight: the report still says what is missing
            with cleaning_up():
                _clean_up(target, environments)
                unregister()
            _write_unstarted(request, target.name, loops, argv)
            signum = stopped_by()
            if signum is None:  # Ctrl-C: `main` says so
                raise
            name = signal.Signals(signum).name
            sys.stdout.write(
                f'workspace-conformance: not certified ({target.name}; stopped by {name} before any rule ran)\n'
            )
            return terminated_status() or EXIT_NOT_CERTIFIED
        if checked_loops is None:
            with cleaning_up():
                _clean_up(target, environments)
                unregister()
            return EXIT_USAGE
        loops = checked_loops[0]
        announce_dropped_capabilities()
        # Hypothesis keeps a cache of constants (and, in the dev profile, its example database) in its home
        # directory, `.hypothesis` in the current directory by default: keep it in the run's own directory.
        hypothesis_home = getattr(hypothesis.configuration, '__hypothesis_home_directory', None)
        hypothesis.configuration.set_hypothesis_home_dir(str(run_dir / 'hypothesis'))
        tests = run_dir / 'suite'
        tests.mkdir()
        (tests / 'pytest.ini').write_text('[pytest]\n')
        (tests / 'test_certification.py').write_text(GENERATED_MODULE)
        spec, pytest_args = _certification_arguments(request, run_dir, checked_loops)
        previous_spec = os.environ.get(SPEC_ENVIRONMENT)
        os.environ[SPEC_ENVIRONMENT] = spec.to_json()
        capture = _RecorderCapture()
        try:
            status = _session(pytest_args, [capture])
        finally:
            # What the run changed in this process goes back, so a caller of `main` (a test) is left as it was.
            hypothesis.configuration.set_hypothesis_home_dir(hypothesis_home)
            if previous_spec is None:
                os.environ.pop(SPEC_ENVIRONMENT, None)
            else:
                os.environ[SPEC_ENVIRONMENT] = previous_spec
            with cleaning_up():
                _clean_up(target, environments)
                unregister()
    subject = request.tools if request.tools is not None and request.target is None else target.name
    return _Ran(status, capture.recorder, subject, loops)


def _suites_left_out(request: CertifyRequest, reported: set[str]) -> list[str]:
    """The suite classes the command asked for that the report lacks (`-k` selected none of their rules)."""
    asked = {
        'TestCertification': request.target is not None or request.tools is None,
        'TestCapability': request.capability is not None,
        'TestTools': request.tools is not None,
        'TestIsolation': request.isolation is not None,
    }
    return [name for name, wanted in asked.items() if wanted and name not in reported]


def _certification_verdict(request: CertifyRequest, argv: Sequence[str] | None, ran: _Ran) -> int:
    """State the run's one verdict (the report's), write the bundle's extras, and return the exit status it means."""
    signum = stopped_by()
    stopped = f'; stopped by {signal.Signals(signum).name}' if signum is not None else ''
    if ran.status == pytest.ExitCode.NO_TESTS_COLLECTED and request.keyword is not None and signum is None:
        return fail(f'-k {request.keyword!r} selects no rule: see `workspace-conformance rules` for their names')
    recorder = ran.recorder
    if (
        recorder is None
        or not recorder.subjects
        or ran.status in (pytest.ExitCode.USAGE_ERROR, pytest.ExitCode.INTERNAL_ERROR)
    ):
        if signum is not None:  # stopped before any rule ran: the report still says what is missing
            _write_unstarted(request, ran.target, ran.loops, argv)
            sys.stdout.write(f'workspace-conformance: not certified ({ran.target}{stopped} before any rule ran)\n')
            return terminated_status() or EXIT_NOT_CERTIFIED
        sys.stdout.write('workspace-conformance: not certified (the run recorded no rule)\n')
        return EXIT_NOT_CERTIFIED
    if request.bundle and recorder.report is not None:
        write_bundle_extras(
            Path(request.bundle),
            recorder.report,
            [*sys.argv[:1], *(sys.argv[1:] if argv is None else argv)],
            _import_paths(request),
            _waivers_path(request),
        )
    # The one verdict: the report's, which also counts whether the run was complete.
    verdict = recorder.report.verdict if recorder.report is not None else 'not certified'
    terminated = terminated_status()
    suites = recorder.report.suites if recorder.report is not None else []
    isolation = ''.join(f'; isolation: {suite.isolation.summary}' for suite in suites if suite.isolation is not None)
    left_out = _suites_left_out(request, {suite.suite_class for suite in suites})
    if left_out:  # -k selected none of their rules: what was asked for was not all checked
        verdict = 'not certified'
        isolation += f'; -k left out every rule of {", ".join(left_out)}'
    sys.stdout.write(
        f'workspace-conformance: {verdict} ({ran.target if request.tools else request.target or "local"}{isolation}'
        f'{stopped})\n'
    )
    if terminated is not None:
        return terminated
    return EXIT_CERTIFIED if verdict == 'certified' else EXIT_NOT_CERTIFIED
