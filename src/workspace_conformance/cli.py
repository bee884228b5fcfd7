"""The `workspace-conformance` command: `certify` a backend, list the `rules`.

It parses the command line and calls: a certification runs in `certifying`, from the `CertifyRequest` built here.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from ._version import __version__
from .capability import capability_rules
from .catalog_format import FORMATS, render_suites
from .certifying import EXIT_CERTIFIED as EXIT_CERTIFIED
from .certifying import EXIT_NOT_CERTIFIED, CertifyRequest, certify
from .certifying import EXIT_NOT_RUN as EXIT_NOT_RUN
from .certifying import EXIT_USAGE as EXIT_USAGE
from .certifying import fail as _fail
from .certifying import say as _say
from .engine.waivers import waiver_file
from .isolation import isolation_rules
from .options import (
    concurrency,
    max_duration,
    output_directory_problem,
    time_scale,
    tool_claims,
    workers,
)
from .reports.diff import diff_reports
from .reports.matrix import MatrixError, find_bundles, group_rows, load_rows, write_matrix
from .reports.submission import BUNDLE, SUBMISSION, is_submission, verify_submission
from .reports.verify import load_report, overridden_in, verify_bundle
from .reports.write import render
from .runtime import emergency
from .runtime.interrupts import stopped_by, terminated_status
from .runtime.leftovers import remove_stale_runs
from .suite import rules
from .targets import NAMED_TARGETS, target_statuses
from .targets.isolation import OWN_CLAIMS
from .targets.listing import render_targets
from .tools import tool_rules

__all__ = ('main',)

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
    """The command line's parser: one `_add_*` function per subcommand, in the order `--help` lists them."""
    parser = _Parser(
        prog='workspace-conformance',
        description='Conformance checks and certification for Pydantic AI workspace backends.',
    )
    parser.add_argument('--version', action='version', version=f'%(prog)s {__version__}')
    commands = parser.add_subparsers(dest='command', required=True, metavar='COMMAND', parser_class=_Parser)
    _add_certify(commands)
    _add_targets(commands)
    _add_rules(commands)
    _add_report(commands)
    _add_diff(commands)
    _add_verify(commands)
    _add_matrix(commands)
    _add_serve(commands)
    _add_clean(commands)
    return parser


def _add_certify(commands: argparse._SubParsersAction[_Parser]) -> None:
    """`certify [TARGET]`: the target, its options and factories, the suites, the run's options, the outputs."""
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
    hooks = (
        ('--fresh', 'MODULE:FACTORY', 'builds an unconnected backend (no ref yet)'),
        ('--attach', 'MODULE:FACTORY', 'factory(ref) building a backend attached by ref'),
        ('--destroy', 'MODULE:FUNCTION', 'async function(backend) destroying its environment'),
        ('--stop', 'MODULE:FUNCTION', "async function(backend) killing its environment's init, files kept"),
        ('--start', 'MODULE:FUNCTION', 'async function(backend) starting that stopped environment again'),
        (
            '--inject-fault',
            'MODULE:FUNCTION',
            "function(backend, kind) arming one fault in your SDK's client ('transient' or 'setup'), returning the "
            'error type it raises, or None',
        ),
    )
    for flag, metavar, text in hooks:
        certify.add_argument(flag, metavar=metavar, help=text)
    _add_suite_options(certify)
    _add_run_options(certify)
    _add_output_options(certify)
    certify.add_argument(
        '--keep-capabilities',
        action='store_true',
        help='as root, keep CAP_DAC_OVERRIDE (the permission rule then skips as a runner gap)',
    )


def _add_suite_options(certify: argparse.ArgumentParser) -> None:
    """`certify`'s suites beside the backend's: --capability, --isolation, --tools and --claims, --expected-failures."""
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


def _add_run_options(certify: argparse.ArgumentParser) -> None:
    """`certify`'s options of the run: event loops, -k, -n, and the --conformance-* options of the pytest plugin."""
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


def _add_output_options(certify: argparse.ArgumentParser) -> None:
    """`certify`'s output: pytest's own (-v, --tb) and the files written (--report, --bundle)."""
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


def _add_targets(commands: argparse._SubParsersAction[_Parser]) -> None:
    """`targets`: the named targets and whether each can run here, with the options they take."""
    targets = commands.add_parser('targets', help='list the named targets and whether each can run here')
    targets.add_argument('--format', choices=['table', 'json'], default='table')
    _add_target_options(targets)


def _add_rules(commands: argparse._SubParsersAction[_Parser]) -> None:
    """`rules`: the rule catalogs, of every suite or one."""
    listing = commands.add_parser('rules', help='print the rule catalogs of the backend, capability and tool suites')
    listing.add_argument('--format', choices=FORMATS, default='table')
    listing.add_argument(
        '--suite',
        choices=['all', 'backend', 'capability', 'tools', 'isolation'],
        default='all',
        help='only the rules of one suite',
    )


def _add_report(commands: argparse._SubParsersAction[_Parser]) -> None:
    """`report REPORT_JSON`: a report rendered in another format."""
    report = commands.add_parser('report', help='render a report.json in another format')
    report.add_argument('report_json', metavar='REPORT_JSON')
    report.add_argument('--format', choices=['json', 'md', 'html', 'junit', 'badge', 'badge-json'], default='md')


def _add_diff(commands: argparse._SubParsersAction[_Parser]) -> None:
    """`diff OLD_JSON NEW_JSON`: two reports compared."""
    diff = commands.add_parser(
        'diff',
        help='compare two report.json files: event loops, catalog and versions that changed, then each rule on '
        'the loops both ran; exit 1 on a regression',
    )
    diff.add_argument('old', metavar='OLD_JSON')
    diff.add_argument('new', metavar='NEW_JSON')


def _add_verify(commands: argparse._SubParsersAction[_Parser]) -> None:
    """`verify DIR`: a bundle or a submission folder checked."""
    verify = commands.add_parser(
        'verify',
        help='check a bundle (hashes, verdicts, completeness), or a submission folder (its README, submission.yaml '
        'and bundle/, docs/submitting.md); exit 1 on a problem',
    )
    verify.add_argument('bundle', metavar='DIR')


def _add_matrix(commands: argparse._SubParsersAction[_Parser]) -> None:
    """`matrix BUNDLE_OR_DIR... --out DIR`: verified bundles side by side."""
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


def _add_serve(commands: argparse._SubParsersAction[_Parser]) -> None:
    """`serve e2b`: the local stand-in for a hosted sandbox service, with its fidelity switches."""
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


def _add_clean(commands: argparse._SubParsersAction[_Parser]) -> None:
    """`clean`: what dead runs left removed."""
    commands.add_parser(
        'clean',
        help='remove the directories (and end the processes) of runs whose process is gone, e.g. killed',
        description=(
            'Remove what runs killed with SIGKILL (or lost with their machine) left in the temporary directory: '
            'their run directories and every process still working in them. A directory whose run is alive, or '
            'that records no owner, is never touched. `certify` does the same before it runs.'
        ),
    )


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
    """The Namespace attribute of the target option `--NAME`."""
    return 'target_' + name.replace('-', '_')


def _target_options(args: argparse.Namespace) -> dict[str, str | None]:
    """Every named target's option by name, with the value given on the command line or None."""
    names = {option.name for named in NAMED_TARGETS.values() for option in named.options}
    return {name: getattr(args, _option_dest(name)) for name in names}


def _certify_request(args: argparse.Namespace) -> CertifyRequest:
    """The `certify` command line parsed into the request `certify` runs: each option, typed, and the target options."""
    return CertifyRequest(
        target=args.target,
        **{hook: getattr(args, hook) for hook in ('fresh', 'attach', 'destroy', 'stop', 'start', 'inject_fault')},
        capability=args.capability,
        tools=args.tools,
        isolation=args.isolation,
        claims=args.claims,
        keyword=args.keyword,
        workers=args.workers,
        time_scale=args.conformance_time_scale,
        concurrency=args.conformance_concurrency,
        max_duration=args.conformance_max_duration,
        rebuild_per_call=args.conformance_rebuild_per_call,
        profile=args.conformance_profile,
        expected_failures=args.expected_failures,
        report=args.report,
        bundle=args.bundle,
        require=args.require,
        keep_capabilities=args.keep_capabilities,
        anyio_backend=args.anyio_backend,
        verbose=args.verbose,
        tbstyle=args.tbstyle,
        target_options=_target_options(args),
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line and return its exit status; a bad command line is one line on stderr and status 2."""
    try:
        return _main(argv)
    except Exception as error:  # a bug: still one line, and a status that is never "certified"
        _say(f'internal error ({type(error).__name__}: {error}): please report it')
        return EXIT_NOT_CERTIFIED


def _main(argv: Sequence[str] | None) -> int:
    """Parse the command line and run its subcommand; `main` turns an unexpected exception into one line."""
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
        status = certify(_certify_request(args), argv)
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
    """`report`: the report.json given, rendered in `--format` on stdout; 2 when it cannot be read."""
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
    """`verify`: check a bundle or submission folder, one line per problem (exit 1), else one line: verified."""
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
