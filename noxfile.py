"""Test environments: the toolkit on the newest pydantic-ai, on the oldest it supports (2.62), and the real targets.

The newest is the newest pydantic-ai-slim the package index serves when the session starts (`newest_slim`), so a new
upstream release is tested, and found, by CI rather than by a person; `WC_SLIM_NEWEST` pins it (.ci/run resolves it
once and prints it at the top of the log). The real targets (Docker engine, sshd, bubblewrap) run in their own
environment because pydantic-ai-harness 0.62 pins pydantic-ai-slim 2.62.0, the oldest the toolkit supports: the fast
tier and the compat tests run there too.
"""

from __future__ import annotations

import fcntl
import importlib.metadata
import os
import shlex
import shutil
import subprocess
import sys

import nox

from workspace_conformance.vocabulary import BYPASS_CAPABILITIES

nox.options.default_venv_backend = 'uv|venv'
"""uv (a dev dependency) builds the targets environment in about 30 s where pip took 4 minutes, with the same versions;
plain venv and pip where uv is missing."""
nox.options.sessions = ['lint', 'tests', 'targets']
"""One after another, their output streamed. `nox --parallel 2` (targets beside tests) was tried on 2 cores: targets
took 35 minutes and tests had not ended at 45, against 38 for all of CI one after another (both compute most of the
time), and a run cut off mid-session loses its buffered log."""
nox.options.reuse_existing_virtualenvs = True

REVIEWED = '2.78.0'
"""The newest slim docs/contract-clauses.toml was reviewed for: what the tiers run on when the index cannot be read."""
OLDEST = '2.62.0'
HARNESS = '0.62.0'
COMPAT_TESTS = [
    # Self-certification on 2.62 is the `targets` session's: it certifies local and local-shell on the harness's slim
    # 2.62.0 (test_an_in_process_target_joins_the_matrix), so compat does not run those 508 rules a second time.
    'tests/test_upstream_parity.py',
    'tests/test_subclassing.py',
    'tests/test_compat.py',
    # The harness's FileSystem, Shell and Coder certified by the tool suite, findings F1-F4 reproduced, and its
    # path-configured capabilities checked with relative and absolute paths: the harness is installed only in
    # `targets`, so `compat` and `tests` skip these modules.
    'tests/tools/test_harness.py',
    'tests/tools/test_harness_paths.py',
    # `serve e2b` driven by the real e2b SDK (async and sync), which pydantic-ai-harness[e2b] brings here.
    'tests/test_serve_e2b.py',
]


DROP = BYPASS_CAPABILITIES
TARGETS_ONLY = ('--ignore', 'tests/real_targets', '--ignore', 'tests/test_serve_e2b.py')
"""Left to `targets`: the real services, and `serve e2b` under the real SDK, which `[dev]` installs too but
`targets` runs (COMPAT_TESTS) beside the harness's E2BSandbox; the tiers would run it a second time."""


XDIST = ('-n', '2', '--dist', 'loadgroup')
"""Two workers; a test marked `xdist_group` runs on one worker with its group (the hostile gallery's certifications
share one run of it, so only one worker waits for it while the other goes on)."""
WIDE_XDIST = ('-n', '4', '--dist', 'loadgroup')
"""Four workers for the sessions with the slow tier, on 2 cores. A third of its test time waits rather than computes:
the hostile gallery's hang shapes sleep through their guards at time scale 1 (about 250 s on one worker), upstream's
suite in the parity corpus sleeps 30 s a loop where a backend runs no commands, the interrupt tests wait for signals
and graces. With two workers one core idled meanwhile (clean-clone `.ci/run`: 16 min 18 s for `tests`); with the
temporary files on a tmpfs (.ci/run), three took 616 s and four 528 s (2026-12-08, back to back, all passed)."""
REAL_XDIST = ('-n', '3', '--dist', 'loadgroup')
"""Three workers for the real targets: the Docker engine's runs keep one (their xdist group), the others share two.
With two, the last third of the step ran at 30-60 % busy while ssh's and bubblewrap's expected failures and e2b-local's
guards waited out their bounds (90 s each at time scale 3): 583 s with two workers, 461 s with three, all 17 passed
(2026-12-08, services up, the run alone on 2 cores)."""
DURATIONS = ('--durations', '25', '--durations-min', '5')
"""CI's log names its slowest tests, so where the 25 minutes go is read from every run, not re-measured."""


def pytest(session: nox.Session, *args: str, python: str = 'python') -> None:
    """pytest; as root, without the capabilities that bypass file permissions, so permission rules run for real."""
    warm_assertion_cache(session, python, 'tests', *TARGETS_ONLY)
    if os.geteuid() == 0 and shutil.which('setpriv'):
        prefix = ['setpriv', '--bounding-set', DROP, '--inh-caps', DROP]
        session.run(*prefix, python, '-m', 'pytest', *args, external=True)
    else:
        session.run(python, '-m', 'pytest', *args, external=True)


def warm_assertion_cache(session: nox.Session, python: str, *paths: str) -> None:
    """Where bytecode is not written (PYTHONDONTWRITEBYTECODE), one collection writes pytest's rewritten modules once.

    pytest rewrites the asserts of test modules and of its plugins' packages (hypothesis, anyio, this toolkit) at
    import and caches the result as bytecode; with the cache unwritable each pytest process, and each `certify` the
    tests start, rewrote them again: 1.1 CPU-seconds a process, and every xdist worker rewrote every test module.
    The cache is read even where it is not written, so the processes after this collection only read it.
    """
    if not os.environ.get('PYTHONDONTWRITEBYTECODE'):
        return
    collect = ('-m', 'pytest', '--collect-only', '-q', '-p', 'no:randomly', '-p', 'no:cacheprovider', *paths)
    # Never the session's verdict: a module that fails to import fails the run that follows, with its output.
    every_code = list(range(256))
    session.run(
        python, *collect, env={'PYTHONDONTWRITEBYTECODE': ''}, external=True, silent=True, success_codes=every_code
    )


def newest_slim() -> str:
    """`WC_SLIM_NEWEST`, else the newest pydantic-ai-slim release the package index serves, else `REVIEWED`."""
    pinned = os.environ.get('WC_SLIM_NEWEST')
    if pinned:
        return pinned
    listed = subprocess.run(
        [sys.executable, '-m', 'pip', 'index', 'versions', 'pydantic-ai-slim'],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    first = listed.stdout.partition('(')[2].partition(')')[0]  # `pydantic-ai-slim (2.78.0)`
    return first if listed.returncode == 0 and first[:1].isdigit() else REVIEWED


def newest(session: nox.Session) -> str:
    """The interpreter nox runs in, with the project and the newest pydantic-ai-slim: lint and the tiers share it.

    `pip install -e '.[dev]'` set that environment up (README, .ci/run); a separate virtual environment per session
    would install the same 146 packages again for each.
    """
    lock = os.path.join(os.path.dirname(os.path.abspath(__file__)), '.nox', 'newest.lock')
    os.makedirs(os.path.dirname(lock), exist_ok=True)
    with open(lock, 'w') as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # `nox --parallel` sessions install into this one environment in turn
        wanted = newest_slim()
        if importlib.metadata.version('pydantic-ai-slim') != wanted:
            session.run(sys.executable, '-m', 'pip', 'install', '-q', f'pydantic-ai-slim=={wanted}', external=True)
        session.log(f'pydantic-ai-slim {wanted}: the newest release (WC_SLIM_NEWEST, or the package index)')
    return sys.executable


@nox.session(venv_backend='none')
def lint(session: nox.Session) -> None:
    """Ruff and mypy --strict over the package, tests, scripts and benchmarks."""
    python = newest(session)
    paths = ('src', 'tests', 'scripts', 'bench', 'noxfile.py')
    session.run(python, '-m', 'ruff', 'check', *paths, external=True)
    session.run(python, '-m', 'ruff', 'format', '--check', *paths, external=True)
    session.run(python, '-m', 'mypy', external=True)


@nox.session(venv_backend='none')
def tests(session: nox.Session) -> None:
    """Both tiers, fast and slow, on the newest pydantic-ai, in four xdist workers (what CI runs)."""
    pytest(session, *WIDE_XDIST, *DURATIONS, *TARGETS_ONLY, *session.posargs, python=newest(session))


@nox.session(venv_backend='none')
def fast(session: nox.Session) -> None:
    """The inner loop: the `fast` tier on the newest pydantic-ai, in two xdist workers (under 3 minutes)."""
    pytest(session, *XDIST, '-m', 'fast', *TARGETS_ONLY, *session.posargs, python=newest(session))


@nox.session(venv_backend='none')
def slow(session: nox.Session) -> None:
    """The `slow` tier: whole-suite runs, the mutant gate, the hostile gallery, the parity corpus, the browser."""
    pytest(session, *WIDE_XDIST, '-m', 'slow', *TARGETS_ONLY, *session.posargs, python=newest(session))


@nox.session
def compat(session: nox.Session) -> None:
    """Drop-in parity, subclassing and version gates on pydantic-ai-slim 2.62, where newer rules are not applicable.

    `targets` runs the same tests in its own environment (slim 2.62 too), so the default run does not install a
    third environment for them; `nox -s compat` runs them alone.
    """
    session.install('-e', '.[dev]', f'pydantic-ai-slim=={OLDEST}')
    pytest(session, *XDIST, *COMPAT_TESTS, *session.posargs)


@nox.session
def targets(session: nox.Session) -> None:
    """Certify docker (runc and gVisor), podman, ssh and bubblewrap for real on services ci/services starts and stops.

    Runs on pydantic-ai-harness 0.62 (which pins pydantic-ai-slim 2.62.0) with the SDKs of its micro-VM, Sprites
    and E2B sandboxes (e2b-local certifies E2BSandbox against `serve e2b`, which the target starts itself), then
    writes docs/targets.md from the reports. `local` and `docker` also run the capability suite (`certify
    --capability`: LocalWorkspace, the harness's DockerSandbox) next to the backend suite.
    boxlite and smol run where the boot probe of `up` booted a VM, and are `not run` with the boot failure
    elsewhere. While `up` installs and starts the services, the fast tier (with the compat tests) runs on this
    environment's slim 2.62.
    The services are stopped, and checked gone, even when a certification fails.
    """
    session.install('-e', '.[dev]', f'pydantic-ai-harness[boxlite,smol,sprites,e2b]=={HARNESS}')
    services = os.environ.get('WC_SERVICES', '/tmp/workspace-conformance-services')
    session.env['WC_SERVICES'] = services
    failed: list[str] = []
    starting = _start_services(session)
    try:
        try:
            # The fast tier on the oldest slim: it holds the compat tests (COMPAT_TESTS are all fast), and runs
            # while `up` installs and starts the services.
            fast = ('-m', 'fast', '--ignore', 'tests/real_targets', '-p', 'no:randomly')
            pytest(session, *XDIST, *fast, python=os.path.join(session.bin, 'python'))
        except nox.command.CommandFailed:
            failed.append('the fast tier on slim 2.62')
        if starting is None:  # --install-only
            return
        if starting.wait() != 0:
            session.error('ci/services/up.sh failed: the real targets cannot run (its output is above)')
        session.env.update(_exported(os.path.join(services, 'env')))
        # -v: one line per certification as it ends, so the log shows which ran last (CI's tail).
        real = ('tests/real_targets', *REAL_XDIST, *DURATIONS, '-v', '-p', 'no:randomly')
        session.run('python', '-m', 'pytest', *real, *session.posargs)
    finally:
        if starting is not None and starting.poll() is None:  # interrupted while the services were starting
            starting.terminate()
            starting.wait()
        session.run('bash', 'ci/services/down.sh', external=True)
    if failed:
        session.error(f'{", ".join(failed)} failed (output above)')
    session.run('python', 'scripts/generate_targets_matrix.py')


def _start_services(session: nox.Session) -> subprocess.Popen[bytes] | None:
    """`ci/services/up.sh` started in the background with this session's environment; None under --install-only."""
    if session.run('true', external=True, silent=True) is None:  # --install-only skips every run
        return None
    bin_dir = session.bin
    env = {**os.environ, **{k: v for k, v in session.env.items() if v is not None}}
    # The session's interpreter first; then nox's own, whose uv installs into a session environment that has no pip.
    env['PATH'] = os.pathsep.join([bin_dir, os.path.dirname(sys.executable), env.get('PATH', '')])
    env['VIRTUAL_ENV'] = os.path.dirname(bin_dir)
    session.log('ci/services/up.sh (in the background, beside the compat tests)')
    return subprocess.Popen(['bash', 'ci/services/up.sh'], env=env)


def _exported(path: str) -> dict[str, str]:
    """The `export NAME=VALUE` lines the service scripts wrote (values are shell-quoted by printf %q)."""
    exported: dict[str, str] = {}
    with open(path, encoding='utf-8') as lines:
        for line in lines:
            name, _, value = line.removeprefix('export ').strip().partition('=')
            exported[name] = ''.join(shlex.split(value))
    return exported
