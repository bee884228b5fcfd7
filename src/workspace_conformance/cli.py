"""The `workspace-conformance` command: `certify` a backend, list the `rules`."""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib.util
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import hypothesis.configuration
import pytest

from ._version import __version__
from .capability import capability_rules
from .catalog_format import FORMATS, render_suites
from .engine.waivers import unknown_ids, waiver_file
from .isolation import isolation_rules
from .options import (
    concurrency,
    keyword_problem,
    max_duration,
    output_directory_problem,
    time_scale,
    tool_claims,
    workers,
)
from .reports.assemble import assemble, now
from .reports.bundle import write_bundle_extras
from .reports.diff import diff_reports
from .reports.matrix import MatrixError, find_bundles, group_rows, load_rows, write_matrix
from .reports.plugin import RECORDER_NAME, ConformanceRecorder, waivers_record
from .reports.recording import SubjectResults
from .reports.redact import Redactor
from .reports.submission import BUNDLE, SUBMISSION, is_submission, verify_submission
from .reports.verify import load_report, overridden_in, verify_bundle
from .reports.write import render, write_all
from .runtime import emergency
from .runtime.interrupts import cleaning_up, signals_stop_the_run, stopped_by, terminated_status
from .runtime.leftovers import StaleRun, remove_stale_runs, run_directory
from .runtime.privileges import announce_dropped_capabilities, drop_bypass_capabilities
from .suite import rules
from .targets import NAMED_TARGETS, CertificationSpec, TargetError, TargetNotRunnable, resolve_target, target_statuses
from .targets.base import Target
from .targets.certification import GENERATED_MODULE, SPEC_ENVIRONMENT
from .targets.isolation import OWN_CLAIMS, claims_option
from .targets.listing import render_targets, write_not_run
from .targets.loading import resolve_capability, resolve_tools
from .targets.preflight import preflight
from .tools import tool_rules

__all__ = ('main',)

EXIT_CERTIFIED, EXIT_NOT_CERTIFIED, EXIT_USAGE, EXIT_NOT_RUN = 0, 1, 2, 3
TRACEBACK_STYLES = ('auto', 'long', 'short', 'line', 'native')
"""`certify --tb` values: pytest's traceback styles (`no`, pytest's per-failure output off, is the default)."""
EXIT_GRACE = 5.0
"""Seconds a process whose run a signal stopped has to exit after its verdict before it is ended."""


class _UsageError(Exception):
    """A bad command line: the one line that says what is wrong and what to pass instead."""


class _Parser(argparse.ArgumentParser):
    """argparse where a bad command line is one line and status 2, and an option given twice is an error."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.register('action', None, _StoreOnce)
        self.register('action', 'store', _StoreOnce)
        self.register('action', 'store_true', _StoreTrueOnce)

    def error(self, message: str) -> NoReturn:
        raise _UsageError(f'{message} (see {self.prog} --help)')


def _given_once(parser: argparse.ArgumentParser, namespace: argparse.Namespace, action: argparse.Action) -> None:
    """Fail when the option of `action` was already given on this command line."""
    given: set[str] = namespace.__dict__.setdefault('_given', set())
    if action.dest in given and action.option_strings:
        raise _UsageError(f'argument {"/".join(action.option_strings)}: given twice: pass it once')
    given.add(action.dest)


class _StoreOnce(argparse._StoreAction):
    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, *args: Any) -> None:
        _given_once(parser, namespace, self)
        super().__call__(parser, namespace, *args)


class _StoreTrueOnce(argparse._StoreTrueAction):
    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, *args: Any) -> None:
        _given_once(parser, namespace, self)
        super().__call__(parser, namespace, *args)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog='workspace-conformance',
        description='Conformance checks and certification for Pydantic AI workspace backends.',
    )
    parser.add_argument('--version', action='version', version=f'%(prog)s {__version__}')
    commands = parser.add_subparsers(dest='command', required=True, metavar='COMMAND', parser_class=_Parser)

    certify = commands.add_parser(
        'certify',
        help='run every rule against a backend and print the verdict',
        description=(
            'Certify a backend. TARGET is a named target (`local`, the default: LocalWorkspaceBackend in a fresh '
            'temporary directory; `workspace-conformance targets` lists them all with their options), '
            'or package.module:factory, a callable returning a backend; it is called with no argument, or with the '
            "run's scratch directory (a pathlib.Path) if it takes one. "
            'Exit 0 when certified, 1 when not, 2 on bad input, 3 when the named target cannot run here (not run).'
        ),
    )
    certify.add_argument(
        'target',
        nargs='?',
        metavar='TARGET',
        help='a named target (`workspace-conformance targets`), or package.module:factory',
    )
    _add_target_options(certify)
    certify.add_argument(
        '--require',
        action='store_true',
        help='exit 1 (not 3) when the named target cannot run here, for CI jobs that must certify it',
    )
    certify.add_argument('--fresh', metavar='MODULE:FACTORY', help='builds an unconnected backend (no ref yet)')
    certify.add_argument('--attach', metavar='MODULE:FACTORY', help='factory(ref) building a backend attached by ref')
    certify.add_argument(
        '--destroy', metavar='MODULE:FUNCTION', help='async function(backend) destroying its environment'
    )
    certify.add_argument(
        '--capability',
        nargs='?',
        const='target',
        metavar='MODULE:FACTORY',
        help="also run the capability suite: on the named target's own capability (no value; local: LocalWorkspace, "
        'provider: InMemoryProvider.capability()), or on package.module:factory returning an AbstractCapability',
    )
    certify.add_argument(
        '--isolation',
        nargs='?',
        const=OWN_CLAIMS,
        metavar='CLAIMS',
        help="also run the isolation suite on the target's sandbox, with the claims its provider documents "
        '(certify says them and their source; docs/isolation.md lists them), or with CLAIMS: none, or a '
        'comma-separated set of files, processes, environment, network',
    )
    certify.add_argument(
        '--tools',
        metavar='MODULE:FACTORY',
        help='run the tool suite on a capability giving the model tools: a named tool target (harness-filesystem, '
        'harness-shell, harness-coder) or package.module:factory returning an AbstractCapability; without TARGET, '
        'only the tool suite runs',
    )
    certify.add_argument(
        '--claims',
        type=tool_claims,
        metavar='CLAIMS',
        help='with --tools: what the capability claims beyond the contract, comma-separated: bounded (huge results '
        'are bounded and say so), contained (no tool reaches outside the working directory, symlinks included), or '
        'none; the rules of a claim made bind, the others report what they saw as advisories',
    )
    certify.add_argument(
        '--expected-failures',
        metavar='FILE',
        type=waiver_file,
        help='a YAML mapping of rule id to reason: each rule runs as a strict expected failure (what the '
        '`expected_failures` fixture means); an entry whose rule passes fails the run, with a line to remove it; '
        'a bundle holds the file and its hash',
    )
    certify.add_argument('--anyio-backend', choices=['asyncio', 'trio', 'all'], default='all')
    certify.add_argument('-k', dest='keyword', metavar='EXPR', help='only rules matching this pytest -k expression')
    certify.add_argument(
        '-n', dest='workers', metavar='N', type=workers, help='run rules in N pytest-xdist workers (or auto)'
    )
    certify.add_argument(
        '--conformance-time-scale',
        type=time_scale,
        default=None,
        metavar='X',
        help='multiply every hang guard and wait (a finite number > 0, e.g. 3 for a slow provider)',
    )
    certify.add_argument(
        '--conformance-concurrency',
        type=concurrency,
        default=None,
        metavar='N',
        help='rules checked at once against the one environment: auto (the default; up to 16 on a backend whose calls '
        'take 25 ms or more), or N (1: one at a time)',
    )
    certify.add_argument(
        '--conformance-max-duration',
        type=max_duration,
        default=None,
        metavar='SECONDS',
        help='end the run after this many seconds: the report is incomplete, the rules not yet checked are missing',
    )
    certify.add_argument(
        '--conformance-rebuild-per-call',
        action='store_true',
        help="durable rebuild mode: every backend operation goes to a backend rebuilt from the ref by the target's "
        'attach (a target without one skips those rules as fixture-missing)',
    )
    certify.add_argument(
        '--conformance-profile',
        choices=['ci', 'certify', 'dev'],
        default='certify',
        help='Hypothesis profile of the generated cases (default: certify, thorough and repeatable)',
    )
    certify.add_argument(
        '-v',
        dest='verbose',
        action='store_true',
        help="pytest's own output too: a line per rule, and each failure's full traceback, the suite's frames included",
    )
    certify.add_argument(
        '--tb',
        dest='tbstyle',
        choices=TRACEBACK_STYLES,
        default=None,
        metavar='STYLE',
        help="pytest's traceback of each failure too, in this style (long also shows the suite's own frames); "
        'by default each failing rule is one block of the summary: the rule, its loops, the clause, the backend frames',
    )
    certify.add_argument('--report', metavar='DIR', help='write report.json, .md, .html, junit.xml and badges there')
    certify.add_argument(
        '--bundle',
        metavar='DIR',
        help='write every report format plus environment.json, REPRODUCE.md and SHA256SUMS there',
    )
    certify.add_argument(
        '--keep-capabilities',
        action='store_true',
        help='as root, keep CAP_DAC_OVERRIDE (the permission rule then skips as a runner gap)',
    )

    targets = commands.add_parser('targets', help='list the named targets and whether each can run here')
    targets.add_argument('--format', choices=['table', 'json'], default='table')
    _add_target_options(targets)

    listing = commands.add_parser('rules', help='print the rule catalogs of the backend, capability and tool suites')
    listing.add_argument('--format', choices=FORMATS, default='table')
    listing.add_argument(
        '--suite',
        choices=['all', 'backend', 'capability', 'tools', 'isolation'],
        default='all',
        help='only the rules of one suite',
    )

    report = commands.add_parser('report', help='render a report.json in another format')
    report.add_argument('report_json', metavar='REPORT_JSON')
    report.add_argument('--format', choices=['json', 'md', 'html', 'junit', 'badge', 'badge-json'], default='md')

    diff = commands.add_parser(
        'diff',
        help='compare two report.json files: event loops, catalog and versions that changed, then each rule on '
        'the loops both ran; exit 1 on a regression',
    )
    diff.add_argument('old', metavar='OLD_JSON')
    diff.add_argument('new', metavar='NEW_JSON')

    verify = commands.add_parser(
        'verify',
        help='check a bundle (hashes, verdicts, completeness), or a submission folder (its README, submission.yaml '
        'and bundle/, docs/submitting.md); exit 1 on a problem',
    )
    verify.add_argument('bundle', metavar='DIR')

    matrix = commands.add_parser(
        'matrix',
        help='verify bundles, then write them side by side: matrix.md, matrix.html, matrix.json; exit 1 when one '
        'does not verify',
        description=(
            'One row per bundle: subject, versions, catalog hash, event loops, verdict, and per area the rules that '
            'passed of those that apply. A directory is searched for bundles (directories with report.json and '
            'SHA256SUMS). A bundle that does not verify is refused with one line, nothing is written, and the exit '
            'status is 1.'
        ),
    )
    matrix.add_argument('bundles', metavar='BUNDLE_OR_DIR', nargs='+')
    matrix.add_argument('--out', metavar='DIR', required=True, help='directory to write the matrix files into')

    serve = commands.add_parser(
        'serve',
        help='run a local stand-in for a hosted sandbox service (e2b) until SIGINT or SIGTERM',
        description=(
            "Serve a pure-Python E2B on 127.0.0.1: the control plane and every sandbox's envd, which the real "
            '`e2b` SDK reaches through the KEY=VALUE settings printed first. On SIGINT or SIGTERM every '
            "sandbox's processes are killed and its files removed. Needs workspace-conformance[serve]. "
            'Fidelity switches (docs/e2b-local.md) model documented E2B behaviours; each is on by default.'
        ),
    )
    serve.add_argument('service', choices=['e2b'], help='the service to emulate')
    serve.add_argument('--port', type=int, default=0, help='port on 127.0.0.1 (default 0: a free one)')
    serve.add_argument('--root', metavar='DIR', help='directory for the sandboxes (default: a new temporary one)')
    serve.add_argument(
        '--unprivileged-files', action='store_true', help="envd's file operations obey mode bits (E2B's do not)"
    )
    serve.add_argument(
        '--list-looping-symlinks', action='store_true', help='listings keep symlinks that loop (E2B omits them)'
    )
    serve.add_argument(
        '--end-at-exit',
        action='store_true',
        help="report a command's end when it exits, not when its output pipes close (as E2B does)",
    )
    serve.add_argument('--unconfined', action='store_true', help='run sandboxes without bubblewrap even if installed')

    commands.add_parser(
        'clean',
        help='remove the directories (and end the processes) of runs whose process is gone, e.g. killed',
        description=(
            'Remove what runs killed with SIGKILL (or lost with their machine) left in the temporary directory: '
            'their run directories and every process still working in them. A directory whose run is alive, or '
            'that records no owner, is never touched. `certify` does the same before it runs.'
        ),
    )
    return parser


def _add_target_options(parser: argparse.ArgumentParser) -> None:
    """One `--NAME VALUE` flag per option any named target takes; its help names the targets that take it."""
    takers: dict[str, list[str]] = {}
    helps: dict[str, str] = {}
    for named in NAMED_TARGETS.values():
        for option in named.options:
            takers.setdefault(option.name, []).append(named.name)
            helps.setdefault(option.name, option.help)
    group = parser.add_argument_group('target options')
    for name, targets in takers.items():
        group.add_argument(
            f'--{name}', dest=_option_dest(name), metavar='VALUE', help=f'[{", ".join(targets)}] {helps[name]}'
        )


def _option_dest(name: str) -> str:
    return 'target_' + name.replace('-', '_')


def _target_options(args: argparse.Namespace) -> dict[str, str | None]:
    names = {option.name for named in NAMED_TARGETS.values() for option in named.options}
    return {name: getattr(args, _option_dest(name)) for name in names}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line and return its exit status; a bad command line is one line on stderr and status 2."""
    try:
        return _main(argv)
    except Exception as error:  # a bug: still one line, and a status that is never "certified"
        _say(f'internal error ({type(error).__name__}: {error}): please report it')
        return EXIT_NOT_CERTIFIED


def _main(argv: Sequence[str] | None) -> int:
    try:
        args = _parser().parse_args(argv)
    except _UsageError as error:
        return _fail(str(error))
    except SystemExit as done:  # --help, --version
        return done.code if isinstance(done.code, int) else 0
    if args.command == 'rules':
        suites = {
            'WorkspaceBackendSuite': rules(),
            'WorkspaceCapabilitySuite': capability_rules(),
            'WorkspaceToolSuite': tool_rules(),
            'WorkspaceIsolationSuite': isolation_rules(),
        }
        wanted = {
            'backend': 'WorkspaceBackendSuite',
            'capability': 'WorkspaceCapabilitySuite',
            'tools': 'WorkspaceToolSuite',
            'isolation': 'WorkspaceIsolationSuite',
        }.get(args.suite)
        sys.stdout.write(render_suites({k: v for k, v in suites.items() if wanted in (None, k)}, args.format))
        return 0
    if args.command == 'report':
        return _report(args)
    if args.command == 'diff':
        return _diff(args)
    if args.command == 'verify':
        return _verify(args)
    if args.command == 'matrix':
        return _matrix(args)
    if args.command == 'serve':
        return _serve(args)
    if args.command == 'clean':
        return _clean()
    if args.command == 'targets':
        sys.stdout.write(render_targets(target_statuses(_target_options(args)), args.format))
        return 0
    try:
        with _importable_from_here(args):
            status = _certify(args, argv)
    except KeyboardInterrupt:  # a signal before or after the session, which handles its own
        signum = stopped_by()
        _say(f'stopped by {signal.Signals(signum).name if signum else "SIGINT"} before any rule ran: not certified')
        status = terminated_status() or EXIT_NOT_CERTIFIED
    if stopped_by() is not None:
        _exit_even_if_a_thread_stays(status)
    return status


def _serve(args: argparse.Namespace) -> int:
    """`serve e2b`: the service in the foreground (its libraries are imported only now)."""
    from .services import e2b

    if not 0 <= args.port <= 65535:
        return _fail(f'--port must be between 0 and 65535, got {args.port}')
    return e2b.run(
        port=args.port,
        root=Path(args.root).resolve() if args.root else None,
        privileged_files=not args.unprivileged_files,
        omit_looping_symlinks=not args.list_looping_symlinks,
        end_after_pipes_close=not args.end_at_exit,
        confine=not args.unconfined,
    )


def _factory_specs(args: argparse.Namespace) -> list[str]:
    """The command's `package.module:attribute` arguments: target, --fresh, --attach, --destroy, --capability."""
    specs = (args.target, args.fresh, args.attach, args.destroy, args.capability, args.tools)
    return [spec for spec in specs if isinstance(spec, str) and ':' in spec]


@contextlib.contextmanager
def _importable_from_here(args: argparse.Namespace) -> Iterator[None]:
    """While `certify` runs, module:factory specs import from the current directory too, as under `python -m`.

    The directory goes first on `sys.path` and on `PYTHONPATH` (for pytest-xdist workers and the setpriv re-exec);
    both are restored afterwards.
    """
    here = os.getcwd()
    if not _factory_specs(args) or here in sys.path:
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


def _exit_even_if_a_thread_stays(status: int) -> None:
    """After a run stopped by a signal, end the process `EXIT_GRACE` s from now if it has not exited by then.

    An interrupt can leave a thread nobody will stop (an event loop's idle worker thread, when the loop was not
    closed): Python would wait for it at exit forever. The run has cleaned up and said its verdict already.
    """

    def end() -> None:
        time.sleep(EXIT_GRACE)
        emergency.exit_now(
            f'the process did not exit within {EXIT_GRACE:g} s of its verdict (a thread the interrupt left); exiting',
            status=status,
        )

    threading.Thread(target=end, name='workspace-conformance-exit', daemon=True).start()


def _report(args: argparse.Namespace) -> int:
    try:
        report = load_report(Path(args.report_json))
    except ValueError as error:
        return _fail(str(error))
    sys.stdout.write(render(report, args.format))
    return 0


def _diff(args: argparse.Namespace) -> int:
    """`diff`: what changed around the rules, then each rule that changed, and the verdicts; 1 on a regression."""
    try:
        old, new = load_report(Path(args.old)), load_report(Path(args.new))
    except ValueError as error:
        return _fail(str(error))
    changes = diff_reports(old, new)
    for line in [*changes.context, *(changes.lines() or ['no rule changed its outcome'])]:
        sys.stdout.write(f'{line}\n')
    sys.stdout.write(f'verdict: {old.verdict} -> {new.verdict}\n')
    return EXIT_NOT_CERTIFIED if changes.regressions else 0


def _verify(args: argparse.Namespace) -> int:
    directory = Path(args.bundle)
    if not directory.is_dir():
        return _fail(f'{directory}: not a directory')
    submission = is_submission(directory)
    problems = verify_submission(directory) if submission else verify_bundle(directory)
    for problem in problems:
        sys.stdout.write(f'{problem}\n')
    if problems:
        return EXIT_NOT_CERTIFIED
    report = load_report(directory / (f'{BUNDLE}/report.json' if submission else 'report.json'))
    overridden = overridden_in(report)
    note = f' ({len(overridden)} overridden by the subclass: {", ".join(overridden)})' if overridden else ''
    rules_count = sum(len(suite.rules) for suite in report.suites)
    what = f'submission {directory.resolve().name} (README.md, {SUBMISSION}, {BUNDLE}/): ' if submission else ''
    sys.stdout.write(f'verified: {what}{report.verdict}, {rules_count} rules{note}, hashes match\n')
    return 0


def _matrix(args: argparse.Namespace) -> int:
    """`matrix`: verify every bundle found, refuse those that fail (one line each, exit 1), else write the matrix."""
    problem = output_directory_problem('--out', args.out)
    if problem is not None:
        return _fail(problem)
    try:
        bundles = find_bundles(Path(path) for path in args.bundles)
    except MatrixError as error:
        return _fail(str(error))
    rows, refused = load_rows(bundles)
    for line in refused:
        _say(line)
    if refused:
        return EXIT_NOT_CERTIFIED
    groups = group_rows(rows)
    for path in write_matrix(groups, Path(args.out)):
        sys.stdout.write(f'wrote {path}\n')
    sys.stdout.write(f'matrix: {len(rows)} bundles in {len(groups)} group(s) (toolkit version and rule catalog)\n')
    return 0


def _clean() -> int:
    """`clean`: remove the directories and processes of dead runs, one line each, or say there were none."""
    removed = remove_stale_runs()
    for stale in removed:
        sys.stdout.write(f'removed {stale.describe()}\n')
    if not removed:
        sys.stdout.write('nothing to remove: no run directory of a dead run\n')
    return 0


def _say_removed(removed: list[StaleRun]) -> None:
    """One line naming the directories (and processes) of dead runs `certify` removed before it ran."""
    if removed:
        listed = '; '.join(stale.describe() for stale in removed)
        _say(f'removed what {len(removed)} killed run(s) left: {listed}')


def _not_run(args: argparse.Namespace, error: TargetNotRunnable) -> int:
    """A named target that cannot run here: say why, keep the reason in the report directory, never pass."""
    redact = Redactor()
    sys.stdout.write(f'workspace-conformance: {redact(str(error))}\n')
    output = args.bundle or args.report
    if output:
        write_not_run(Path(output), error.target, redact(error.reason))
    return EXIT_NOT_CERTIFIED if args.require else EXIT_NOT_RUN


def _clean_up(target: Target, run_root: Path) -> None:
    """Remove what the run created outside its scratch directory; a failure is reported, never raised."""
    if target.cleanup is None:
        return
    try:
        target.cleanup(run_root)
    except Exception as error:
        _say(f'cleanup of {target.name} failed: {type(error).__name__}: {error}')


def _say(message: str) -> None:
    """Write one line to stderr, with the runner's secrets (a key in a factory's error) redacted."""
    sys.stderr.write(f'workspace-conformance: {Redactor()(message)}\n')


def _fail(message: str) -> int:
    _say(message)
    return EXIT_USAGE


def _anyio_backends(choice: str) -> tuple[str, ...] | str:
    has_trio = importlib.util.find_spec('trio') is not None
    if choice == 'trio' and not has_trio:
        return 'trio is not installed: pip install "workspace-conformance[trio]", or pass --anyio-backend asyncio'
    if choice == 'all':
        return ('asyncio', 'trio') if has_trio else ('asyncio',)
    return (choice,)


def _import_paths(args: argparse.Namespace) -> list[str]:
    """The directories on sys.path that hold the modules of the command's package.module:factory arguments.

    Those a bundle's REPRODUCE.md puts on PYTHONPATH; an installed module (under site-packages) needs none.
    """
    paths: list[str] = []
    for spec in _factory_specs(args):
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


def _waivers_path(args: argparse.Namespace) -> Path | None:
    """The file of expected failures `certify` was given, for its bundle to hold."""
    return None if args.expected_failures is None else Path(args.expected_failures.path)


def _write_unstarted(args: argparse.Namespace, name: str, loops: tuple[str, ...], argv: Sequence[str] | None) -> None:
    """The report of a run stopped before its first rule: incomplete, every rule `missing` (if one was asked for)."""
    output = args.bundle or args.report
    if not output:
        return
    subject = SubjectResults(subject=f'test_certification.py::TestCertification[{name}]', started=set(loops))
    subject.expected.update({rule.id: (rule.area, rule.level, rule.strength) for rule in rules()})
    command = [*sys.argv[:1], *(sys.argv[1:] if argv is None else argv)]
    report = assemble(
        [subject],
        started=now(),
        profile=args.conformance_profile,
        interrupted=True,
        command=command,
        waivers_file=waivers_record(args.expected_failures),
    )
    write_all(report, Path(output))
    if args.bundle:
        write_bundle_extras(Path(args.bundle), report, command, _import_paths(args), _waivers_path(args))


def _session(pytest_args: list[str], plugins: list[object]) -> int:
    """The pytest session of a certification; returns its exit status."""
    return int(pytest.main(pytest_args, plugins=plugins))


def _output_options(args: argparse.Namespace) -> list[str]:
    """Pytest's output options: quiet, no per-failure sections or short summary (the summary's blocks say it all).

    `-v` or `--tb STYLE` bring pytest's own failure sections and its list of failed items back.
    """
    if not args.verbose and args.tbstyle is None:
        return ['-q', '--tb=no', '-rN']
    return ['-v' if args.verbose else '-q', f'--tb={args.tbstyle or "auto"}', '-rfE']


def _certify_problem(args: argparse.Namespace, loops: tuple[str, ...]) -> str | None:
    """What is wrong with `certify`'s options beyond what argparse checks, found before anything runs and writes."""
    if args.report and args.bundle:
        return '--report and --bundle: pass one (--bundle DIR writes the report files too)'
    for option, value in (('--report', args.report), ('--bundle', args.bundle)):
        if value is not None:
            problem = output_directory_problem(option, value)
            if problem is not None:
                return problem
    if args.isolation is not None:
        problem = _isolation_problem(args)
        if problem is not None:
            return problem
    if args.claims is not None and args.tools is None:
        return '--claims says what a tool capability claims: use it with --tools MODULE:FACTORY'
    selectable = (
        *(rules() if args.target is not None or args.tools is None else ()),
        *(capability_rules() if args.capability is not None else ()),
        *(tool_rules() if args.tools is not None else ()),
        *(isolation_rules() if args.isolation is not None else ()),
    )
    if args.expected_failures is not None:
        problem = unknown_ids(
            f'--expected-failures {args.expected_failures.path}',
            args.expected_failures.entries,
            {rule.id for rule in selectable},
        )
        if problem is not None:
            return problem
    if args.keyword is not None:
        return keyword_problem(args.keyword, (f'test_{rule.id}' for rule in selectable), loops)
    return None


def _say_claims(target: Target) -> None:
    """One line: the isolation the target claims (`--isolation` checks it) and where its provider documents it."""
    claims = ', '.join(sorted(target.isolation_claims)) or 'no isolation'
    _say(f'{target.name} claims {claims}: {target.isolation_source or "its provider documents no isolation"}')


def _isolation_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with `--isolation` here: no TARGET beside `--tools`, a target name given as CLAIMS, bad claims."""
    if args.tools is not None and args.target is None:
        return "--isolation checks a TARGET's sandbox: name one (certify TARGET --isolation --tools ...)"
    if args.isolation in NAMED_TARGETS or ':' in args.isolation:
        given = args.isolation
        return f'--isolation took {given!r} as its CLAIMS: put TARGET first (certify {given} --isolation)'
    try:
        claims_option(args.isolation)
    except TargetError as error:
        return str(error)
    return None


class _RecorderCapture:
    """Keeps the session's recorder after pytest has finished, so the CLI can state the verdict."""

    recorder: ConformanceRecorder | None = None

    @pytest.hookimpl(trylast=True)
    def pytest_unconfigure(self, config: pytest.Config) -> None:
        self.recorder = config.pluginmanager.get_plugin(RECORDER_NAME)


def _preflight(
    args: argparse.Namespace, target: Target, loops: tuple[str, ...], environments: Path
) -> tuple[tuple[str, ...], dict[str, str], bool] | None:
    """A factory target's loops after its preflight, those left out and why, and whether its factory is awaited.

    None, said in one line, when the backend works on no loop. Loops are left out only when the user let certify
    choose them (`--anyio-backend all`, the default).
    """
    if args.target is None or args.target in NAMED_TARGETS:  # named targets check their requirements themselves
        return loops, {}, False
    found = preflight(
        target, loops, environments, scale=args.conformance_time_scale or 1.0, choose=args.anyio_backend == 'all'
    )
    for trial in found.trials:
        if trial.cleanup:
            _say(f'cleaning up the preflight backend on {trial.loop}: {trial.cleanup}')
    if found.failure is not None:
        _say(found.failure)
        return None
    for line in found.lines():
        _say(line)
    return found.loops, found.left_out, found.awaits


def _certify(args: argparse.Namespace, argv: Sequence[str] | None = None) -> int:
    """Certify the target `args` names: run every rule in a pytest session of its own, then state the verdict."""
    ran = _run_certification(args, argv)
    return ran if isinstance(ran, int) else _certification_verdict(args, argv, ran)


@dataclass(frozen=True)
class _Ran:
    """What a certification's pytest session left for its verdict: its status, the recorder, the target and loops."""

    status: int
    recorder: ConformanceRecorder | None
    target: str
    loops: tuple[str, ...]


def _certification_arguments(
    args: argparse.Namespace,
    run_dir: Path,
    options: dict[str, str | None],
    preflown: tuple[tuple[str, ...], dict[str, str], bool],
) -> tuple[CertificationSpec, list[str]]:
    """The spec the generated test module reads, and the arguments of the pytest session that runs it.

    `preflown` is what the preflight found: the loops to run, those left out and why, and whether the factory awaits.
    """
    loops, left_out, awaits = preflown
    spec = CertificationSpec(
        target=args.target,
        run_dir=str(run_dir / 'environments'),
        anyio_backends=loops,
        fresh=args.fresh,
        attach=args.attach,
        destroy=args.destroy,
        options={name: value for name, value in options.items() if value is not None},
        run_id=run_dir.name,
        capability=args.capability,
        tools=args.tools,
        isolation=args.isolation,
        claims=args.claims,
        loops_left_out=left_out,
        awaits=awaits,
    )
    tests = run_dir / 'suite'
    pytest_args = [
        str(tests),
        *_output_options(args),
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
    if args.keyword:
        pytest_args += ['-k', args.keyword]
    if args.workers:
        pytest_args += ['-n', str(args.workers)]
    if args.conformance_time_scale is not None:
        pytest_args += ['--conformance-time-scale', str(args.conformance_time_scale)]
    if args.conformance_concurrency is not None:
        pytest_args += ['--conformance-concurrency', str(args.conformance_concurrency)]
    if args.conformance_max_duration is not None:
        pytest_args += ['--conformance-max-duration', str(args.conformance_max_duration)]
    if args.conformance_rebuild_per_call:
        pytest_args.append('--conformance-rebuild-per-call')
    pytest_args += ['--conformance-profile', args.conformance_profile]
    if args.expected_failures is not None:
        pytest_args += ['--conformance-expected-failures', args.expected_failures.path]
    output = args.bundle or args.report
    if output:
        pytest_args += ['--conformance-report', str(Path(output).resolve())]
    return spec, pytest_args


def _run_certification(args: argparse.Namespace, argv: Sequence[str] | None) -> int | _Ran:
    """Check the arguments, resolve and preflight the target, then run the rules; an exit status when it stops early."""
    backends = _anyio_backends(args.anyio_backend)
    if isinstance(backends, str):
        return _fail(backends)
    if args.workers and importlib.util.find_spec('xdist') is None:
        return _fail('-n needs pytest-xdist: pip install "workspace-conformance[xdist]"')
    problem = _certify_problem(args, backends)
    if problem is not None:
        return _fail(problem)
    _say_removed(remove_stale_runs())
    options = _target_options(args)
    resolve = functools.partial(
        resolve_target, args.target, options=options, fresh=args.fresh, attach=args.attach, destroy=args.destroy
    )
    emergency.set_status(EXIT_NOT_CERTIFIED)  # a run the watchdog has to end is not certified
    try:
        checked = resolve()  # a factory target is imported here, and built in the preflight
        if args.capability is not None:  # built once, so a factory that returns no capability fails here
            with run_directory('workspace-conformance-check-') as check_dir:
                resolve_capability(args.capability, checked)(Path(check_dir) / 'capability')
        if args.tools is not None:  # built once, so a factory that returns no capability fails here
            resolve_tools(args.tools).build()
    except TargetNotRunnable as error:
        return _not_run(args, error)
    except TargetError as error:
        return _fail(str(error))
    named = NAMED_TARGETS.get(args.target or 'local')
    if not args.keep_capabilities and not (named and named.keeps_capabilities):
        drop_bypass_capabilities(argv)
    # The run's directory, and every process working in it, go when the run ends: also on Ctrl-C, SIGTERM or SIGHUP
    # (a second one exits at once, still cleaning up) and when the watchdog has to end a run whose backend ignores
    # cancellation.
    with signals_stop_the_run(), run_directory('workspace-conformance-', while_cleaning=cleaning_up) as run_dir:
        target = resolve(run_id=run_dir.name, check_requirements=False)
        loops = tuple(loop for loop in backends if loop in target.event_loops)
        if args.isolation == OWN_CLAIMS:
            _say_claims(target)
        if not loops:
            return _fail(f'target {target.name!r} runs only on {", ".join(target.event_loops)}: pass --anyio-backend')
        environments = run_dir / 'environments'
        unregister = emergency.on_exit(lambda: _clean_up(target, environments))
        try:
            checked_loops = _preflight(args, target, loops, environments)
        except KeyboardInterrupt:  # a signal during the preflight: the report still says what is missing
            with cleaning_up():
                _clean_up(target, environments)
                unregister()
            _write_unstarted(args, target.name, loops, argv)
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
        spec, pytest_args = _certification_arguments(args, run_dir, options, checked_loops)
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
    subject = args.tools if args.tools is not None and args.target is None else target.name
    return _Ran(status, capture.recorder, subject, loops)


def _suites_left_out(args: argparse.Namespace, reported: set[str]) -> list[str]:
    """The suite classes the command asked for that the report lacks (`-k` selected none of their rules)."""
    asked = {
        'TestCertification': args.target is not None or args.tools is None,
        'TestCapability': args.capability is not None,
        'TestTools': args.tools is not None,
        'TestIsolation': args.isolation is not None,
    }
    return [name for name, wanted in asked.items() if wanted and name not in reported]


def _certification_verdict(args: argparse.Namespace, argv: Sequence[str] | None, ran: _Ran) -> int:
    """State the run's one verdict (the report's), write the bundle's extras, and return the exit status it means."""
    signum = stopped_by()
    stopped = f'; stopped by {signal.Signals(signum).name}' if signum is not None else ''
    if ran.status == pytest.ExitCode.NO_TESTS_COLLECTED and args.keyword is not None and signum is None:
        return _fail(f'-k {args.keyword!r} selects no rule: see `workspace-conformance rules` for their names')
    recorder = ran.recorder
    if (
        recorder is None
        or not recorder.subjects
        or ran.status in (pytest.ExitCode.USAGE_ERROR, pytest.ExitCode.INTERNAL_ERROR)
    ):
        if signum is not None:  # stopped before any rule ran: the report still says what is missing
            _write_unstarted(args, ran.target, ran.loops, argv)
            sys.stdout.write(f'workspace-conformance: not certified ({ran.target}{stopped} before any rule ran)\n')
            return terminated_status() or EXIT_NOT_CERTIFIED
        sys.stdout.write('workspace-conformance: not certified (the run recorded no rule)\n')
        return EXIT_NOT_CERTIFIED
    if args.bundle and recorder.report is not None:
        write_bundle_extras(
            Path(args.bundle),
            recorder.report,
            [*sys.argv[:1], *(sys.argv[1:] if argv is None else argv)],
            _import_paths(args),
            _waivers_path(args),
        )
    # The one verdict: the report's, which also counts whether the run was complete.
    verdict = recorder.report.verdict if recorder.report is not None else 'not certified'
    terminated = terminated_status()
    suites = recorder.report.suites if recorder.report is not None else []
    isolation = ''.join(f'; isolation: {suite.isolation.summary}' for suite in suites if suite.isolation is not None)
    left_out = _suites_left_out(args, {suite.suite_class for suite in suites})
    if left_out:  # -k selected none of their rules: what was asked for was not all checked
        verdict = 'not certified'
        isolation += f'; -k left out every rule of {", ".join(left_out)}'
    sys.stdout.write(
        f'workspace-conformance: {verdict} ({ran.target if args.tools else args.target or "local"}{isolation}'
        f'{stopped})\n'
    )
    if terminated is not None:
        return terminated
    return EXIT_CERTIFIED if verdict == 'certified' else EXIT_NOT_CERTIFIED
