"""Certify one hostile backend through the real CLI, in a subprocess, and collect what it left: report, time, leftovers.

The time bound of a certification is computed from the rule catalog, never guessed (`bound`):

    loops x sum over rules of (hang guard + CLEANUP_BOUND) x time scale     every rule hangs to its guard, then
                                                                           its cleanup to its own bound
    + loops x (Hypothesis rules) x ABANDON_WAIT                            each waits for its abandoned engine
    + GRACE + ABANDON_AFTER + EXIT_AFTER                                   the watchdog, once: it interrupts a
                                                                           rule, then ends a run that is stuck
    + STARTUP                                                              interpreter start(s), collection,
                                                                           the report

With this catalog (116 rules; guards 8,040 s and cleanup bounds 3,480 s in all at scale 1; 6 Hypothesis rules) on
one event loop: 219.6 s at time scale 0.005, 277.2 s at 0.01, 392.4 s at 0.02, 738.0 s at 0.05, 3042.0 s at 0.25.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import uuid
from dataclasses import dataclass, field, fields
from pathlib import Path

from workspace_conformance.engine._guard import CLEANUP_BOUND
from workspace_conformance.engine._hypothesis import ABANDON_WAIT
from workspace_conformance.reports.model import Report
from workspace_conformance.reports.verify import load_report
from workspace_conformance.runtime.leftovers import alive, names_path
from workspace_conformance.runtime.watchdog import ABANDON_AFTER, EXIT_AFTER, GRACE
from workspace_conformance.suite import rules

from .backends import MARKER, SPAWNED
from .gallery import Hostile

ROOT = Path(__file__).resolve().parents[2]
STARTUP = 60.0
"""Seconds for what no guard bounds: interpreter starts (two with the setpriv re-exec), collection, the report."""
SCRATCH = re.compile(r'\.workspace-conformance-')


def bound(scale: float, loops: int = 1) -> float:
    """The longest a whole certification may take at `scale` on `loops` event loops (see the module docstring)."""
    catalog = rules()
    guards = sum(rule.timeout + CLEANUP_BOUND for rule in catalog) * scale
    engines = sum(1 for rule in catalog if rule.area in ('properties', 'stateful')) * ABANDON_WAIT
    return loops * (guards + engines) + GRACE + ABANDON_AFTER + EXIT_AFTER + STARTUP


@dataclass
class Certification:
    """How one certification ended, and everything it left behind."""

    name: str
    returncode: int
    wall: float
    bound: float
    timed_out: bool
    report: Report | None
    report_problem: str | None
    stdout: str
    stdout_bytes: int
    stderr: str
    report_dir: str = ''
    leftover_processes: list[str] = field(default_factory=list)
    leftover_paths: list[str] = field(default_factory=list)
    interrupted_at: list[float] = field(default_factory=list)

    def to_json(self) -> str:
        """Everything but the parsed report, which `from_json` reads again from `report_dir`."""
        kept = [item.name for item in fields(self) if item.name not in ('report', 'report_problem')]
        return json.dumps({name: getattr(self, name) for name in kept})

    @classmethod
    def from_json(cls, text: str) -> Certification:
        data = json.loads(text)
        report, problem = _load(Path(data['report_dir']))
        return cls(**data, report=report, report_problem=problem)

    def failures(self) -> dict[str, str]:
        """Rule id (and event loop) -> the failure excerpt, for every failed rule."""
        assert self.report is not None
        return {
            f'{result.rule_id}[{result.anyio_backend}]': result.excerpt or ''
            for suite in self.report.suites
            for result in suite.results
            if result.outcome == 'failed'
        }

    def outcomes(self) -> dict[str, int]:
        """How many results had each outcome."""
        assert self.report is not None
        counts: dict[str, int] = {}
        for suite in self.report.suites:
            for result in suite.results:
                counts[result.outcome] = counts.get(result.outcome, 0) + 1
        return counts


def _processes_naming(marker: str, directory: Path) -> list[str]:
    """Live processes whose environment holds `marker`, or whose working directory or arguments name `directory`."""
    found = []
    needle, place = marker.encode(), os.fsencode(str(directory))
    for entry in os.scandir('/proc'):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        proc = Path(entry.path)
        if not alive(int(entry.name)):
            continue
        try:
            names = [(proc / 'cmdline').read_bytes(), os.fsencode(os.readlink(proc / 'cwd'))]
            hits = needle in (proc / 'environ').read_bytes() or any(names_path(name, place) for name in names)
        except OSError:
            continue
        if hits:
            argv = (proc / 'cmdline').read_bytes().replace(b'\0', b' ').decode(errors='replace')
            found.append(f'{entry.name} {argv[:200]}')
    return found


def certify(
    name: str,
    workdir: Path,
    *,
    scale: float,
    loops: str = 'asyncio',
    target: str | None = None,
    extra: tuple[str, ...] = (),
    started: Path | None = None,
    interrupts: int = 0,
    gap: float = 1.0,
    signal: str = 'INT',
    timeout: float | None = None,
    environment: dict[str, str] | None = None,
    keep_capabilities: bool = False,
    pytest_module: Path | None = None,
) -> Certification:
    """Run `workspace-conformance certify` on one backend, under the probe, in a fresh TMPDIR and working directory.

    `keep_capabilities` skips the re-execution through `setpriv` that `certify` does as root (one interpreter start
    less); the permission rule is then a `runner` gap, which the hostile backends do not care about.
    `pytest_module` runs that test module (a suite subclass) with plain pytest instead of `certify`.
    """
    tmp, cwd, out, report_dir = workdir / 'tmp', workdir / 'cwd', workdir / 'probe', workdir / 'report'
    for path in (tmp, cwd):
        path.mkdir(parents=True)
    marker = f'hostile-{uuid.uuid4().hex}'
    environment = {
        **os.environ,
        **(environment or {}),
        'TMPDIR': str(tmp),
        # Hypothesis keeps a cache (`.hypothesis/constants`) in the working directory, as it does for every user;
        # it is Hypothesis's, not the run's, so it goes beside the run's output instead of into what is checked.
        'HYPOTHESIS_STORAGE_DIRECTORY': str(out / 'hypothesis'),
        'PYTHONPATH': os.pathsep.join(filter(None, [str(ROOT), os.environ.get('PYTHONPATH')])),
        MARKER: marker,
    }
    environment.pop('PYTEST_XDIST_WORKER', None)
    environment.pop('PYTEST_CURRENT_TEST', None)
    loop_count = 2 if loops == 'all' else 1
    limit = bound(scale, loop_count)
    command = [
        *(sys.executable, '-m', 'workspace_conformance', 'certify', target or f'tests.hostile.backends:{name}'),
        *extra,
        *('--anyio-backend', loops, '--conformance-time-scale', str(scale), '--conformance-profile', 'ci'),
        *('--report', str(report_dir)),
        *(('--keep-capabilities',) if keep_capabilities else ()),
    ]
    if pytest_module is not None:
        command = [
            *(sys.executable, '-m', 'pytest', str(pytest_module), '-q', '-p', 'no:cacheprovider'),
            *('--rootdir', str(pytest_module.parent), '--basetemp', str(workdir / 'basetemp')),
            *(('-k', loops) if loops != 'all' else ()),
            *('--conformance-time-scale', str(scale)),
            *('--conformance-report', str(report_dir)),
        ]
    probe = [sys.executable, '-m', 'tests.hostile.probe', '--timeout', str(timeout or limit), '--output', str(out)]
    if started is not None:
        probe += ['--started', str(started), '--interrupts', str(interrupts), '--gap', str(gap), '--signal', signal]
    finished = subprocess.run(
        [*probe, '--', *command],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=(timeout or limit) + 60,
        check=False,
    )
    assert finished.returncode == 0, finished.stderr
    result = json.loads(finished.stdout)
    stdout = (out / 'stdout').read_bytes()
    report, problem = _load(report_dir)
    paths = [str(path) for place in (tmp, cwd) for path in place.rglob('*')]
    paths += [str(path) for path in workdir.rglob('*') if SCRATCH.search(path.name)]
    return Certification(
        name=name,
        returncode=result['returncode'],
        wall=result['wall'],
        bound=limit,
        timed_out=result['timed_out'],
        report=report,
        report_problem=problem,
        stdout=stdout[-20_000:].decode(errors='replace'),
        stdout_bytes=len(stdout),
        stderr=(out / 'stderr').read_bytes()[-20_000:].decode(errors='replace'),
        leftover_processes=[*result['leftovers'], *_processes_naming(marker, workdir)],
        leftover_paths=paths,
        interrupted_at=result['interrupted_at'],
        report_dir=str(report_dir),
    )


def _load(report_dir: Path) -> tuple[Report | None, str | None]:
    try:
        return load_report(report_dir / 'report.json'), None
    except (OSError, ValueError) as error:
        return None, f'{type(error).__name__}: {error}'


def certify_entry(entry: Hostile, root: Path) -> Certification:
    """Certify one gallery entry in `root/<id>/run`; the pids its backend spawns go to `root/<id>/spawned`."""
    workdir = root / entry.id
    return certify(
        entry.name,
        workdir / 'run',
        scale=entry.scale,
        loops=entry.loops,
        target=entry.target,
        extra=entry.extra,
        environment={SPAWNED: str(workdir / 'spawned')},
        keep_capabilities=True,
    )
