"""The command line, fuzzed: any argv ends in status 0-3, one-line errors, no traceback, nothing left behind.

Generated command lines cover every subcommand with valid and invalid values, unknown flags, duplicated options,
odd paths and corrupt reports. They run in-process through `cli.main`; a `certify` that passes validation runs its
checks and run directory for real, but its pytest session is replaced by a stub (real sessions are the other CLI
tests' job, and one real narrowed run here builds the bundle the `verify`, `report` and `diff` cases read).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workspace_conformance import certifying, cli
from workspace_conformance.runtime import privileges
from workspace_conformance.runtime.leftovers import processes_of

EXAMPLES = 300
"""Generated command lines per run of the fuzz test (about 20 s here)."""
NARROW = 'test_exists and not below and not working_dir'
"""A -k expression selecting one cheap rule."""
BAD, GOOD, ANY = 'bad', 'good', 'any'
"""What a case expects: a usage error (status 2, never a verdict), success of its command, or any valid status."""


@dataclass(frozen=True)
class Places:
    """Paths the generated command lines name: a real bundle, corrupt reports, a file, a missing directory."""

    root: Path
    bundle: Path
    report: Path
    corrupt: tuple[Path, ...]
    tampered: Path
    broken: Path
    a_file: Path


@pytest.fixture(scope='module')
def places(tmp_path_factory: pytest.TempPathFactory) -> Places:
    root = tmp_path_factory.mktemp('fuzz-places')
    bundle = root / 'bundle'
    environment = {**os.environ, 'TMPDIR': str(root)}
    environment.pop('PYTEST_XDIST_WORKER', None)
    command = [sys.executable, '-m', 'workspace_conformance', 'certify', 'memory', '-k', NARROW, '--keep-capabilities']
    command += ['--anyio-backend', 'asyncio', '--conformance-profile', 'ci', '--bundle', str(bundle)]
    finished = subprocess.run(
        command,
        cwd=root,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert finished.returncode == 1, finished.stdout[-2000:] + finished.stderr
    assert finished.stdout.rstrip().endswith('not certified (memory)')
    report = bundle / 'report.json'
    text = report.read_text()
    corrupt = []
    for name, content in {
        'truncated.json': text[: len(text) // 2],
        'garbage.json': '\x00\xff not json',
        'empty.json': '',
        'wrong-schema.json': json.dumps({'schema_version': 'x', 'suites': 'no'}),
        'list.json': '[1, 2, 3]',
    }.items():
        path = root / name
        path.write_text(content, errors='surrogateescape')
        corrupt.append(path)
    tampered = root / 'tampered'
    shutil.copytree(bundle, tampered)
    (tampered / 'report.json').write_text(text.replace('"passed"', '"failed"', 1))
    broken = root / 'broken'
    shutil.copytree(bundle, broken)
    (broken / 'report.json').write_bytes(b'\xff\xfe{ not json')
    (broken / 'SHA256SUMS').write_bytes(b'\xff\x00  ../../etc/passwd\n')
    a_file = root / 'a-file'
    a_file.write_text('not a directory\n')
    return Places(root, bundle, report, tuple(corrupt), tampered, broken, a_file)


Case = tuple[list[str], str]
"""A command line and what it expects (BAD, GOOD or ANY)."""


Part = tuple[list[str], bool]
"""Some arguments, and whether they are bad."""


def _flag(name: str, good: list[str], bad: list[str], *, allow_bad: bool = True) -> st.SearchStrategy[Part]:
    """`[name, value]` with a good (or, when `allow_bad`, a bad) value, or nothing."""
    choices = [st.just(([], False)), st.sampled_from(good).map(lambda value: ([name, value], False))]
    if allow_bad:
        choices.append(st.sampled_from(bad).map(lambda value: ([name, value], True)))
    return st.one_of(*choices)


def _some(parts: list[Part], allow_bad: bool) -> st.SearchStrategy[Part]:
    return st.sampled_from([part for part in parts if allow_bad or not part[1]])


def _certify(places: Places, *, allow_bad: bool) -> st.SearchStrategy[Case]:
    """`certify` command lines; with `allow_bad` False, only valid ones (which then run, on a stub session)."""
    out = str(places.root / 'out' / 'new')
    bad = allow_bad
    parts = [
        _some([(['memory'], False), (['local'], False), (['nonsense'], True), (['no_such:thing'], True)], bad),
        st.just((['--keep-capabilities'], False)),
        _flag('--anyio-backend', ['asyncio'], ['curio', ''], allow_bad=bad),
        _flag(
            '--conformance-time-scale', ['1', '2.5', '0.5', '1e3'], ['0', '-1', '-0', 'nan', 'inf', 'x'], allow_bad=bad
        ),
        _flag('-n', ['1', 'auto'], ['0', '-2', 'abc', '1.5', '', ' 2'], allow_bad=bad),
        _flag('--conformance-profile', ['ci', 'certify', 'dev'], ['fast', 'CI'], allow_bad=bad),
        _flag('-k', [NARROW, 'exists', 'not exists', ''], ['zzz_no_rule', 'exists and', 'f(x=1)', ' '], allow_bad=bad),
        _flag('--report', [out], [str(places.a_file), '/proc/x', f'{places.a_file}/below'], allow_bad=bad),
        _flag('--bundle', [str(places.root / 'out' / 'b')], [str(places.a_file), '/proc/no/deeper'], allow_bad=bad),
        _some([([], False), (['--bogus'], True), (['-z'], True), (['-k', 'a', '-k', 'b'], True)], bad),
        _some([([], False), (['--anyio-backend', 'asyncio', '--anyio-backend', 'asyncio'], True)], bad),
    ]
    return st.tuples(*parts).map(_certify_case)


def _certify_case(chosen: tuple[tuple[list[str], bool], ...]) -> Case:
    argv = ['certify', *(arg for part, _ in chosen for arg in part)]
    bad = any(is_bad for _, is_bad in chosen) or ('--report' in argv and '--bundle' in argv)  # contradictory
    return argv, BAD if bad else ANY


def _reading(places: Places) -> st.SearchStrategy[Case]:
    good = str(places.report)
    bad = [*map(str, places.corrupt), str(places.root), '/proc/x', str(places.a_file), '']
    formats = _flag('--format', ['md', 'json', 'html', 'junit', 'badge', 'badge-json'], ['pdf', ''])
    report = st.tuples(st.sampled_from([(good, False)] + [(path, True) for path in bad]), formats).map(
        lambda chosen: (['report', chosen[0][0], *chosen[1][0]], BAD if chosen[0][1] or chosen[1][1] else GOOD)
    )
    pair = st.sampled_from([(good, False)] + [(path, True) for path in bad])
    diff = st.tuples(pair, pair).map(
        lambda chosen: (['diff', chosen[0][0], chosen[1][0]], BAD if chosen[0][1] or chosen[1][1] else GOOD)
    )
    verify = st.sampled_from(
        [
            (['verify', str(places.bundle)], ANY),  # narrowed, so incomplete: status 1
            (['verify', str(places.tampered)], ANY),
            (['verify', str(places.broken)], ANY),
            (['verify', str(places.root)], ANY),
            (['verify', str(places.a_file)], BAD),
            (['verify', '/proc/x'], BAD),
            (['verify'], BAD),
        ]
    )
    out = str(places.root / 'out' / 'matrix')
    matrix = st.sampled_from(
        [
            (['matrix', str(places.bundle), '--out', out], ANY),  # narrowed, so incomplete: refused, status 1
            (['matrix', str(places.root), '--out', out], ANY),
            (['matrix', str(places.tampered), str(places.bundle), '--out', out], ANY),
            (['matrix', str(places.a_file), '--out', out], BAD),
            (['matrix', '/proc/x', '--out', out], BAD),
            (['matrix', str(places.bundle), '--out', str(places.a_file)], BAD),
            (['matrix', str(places.bundle)], BAD),
            (['matrix'], BAD),
        ]
    )
    return st.one_of(report, diff, verify, matrix)


def _others() -> st.SearchStrategy[Case]:
    return st.sampled_from(
        [
            (['rules'], GOOD),
            (['rules', '--format', 'json'], GOOD),
            (['rules', '--format', 'yaml'], BAD),
            (['rules', '--format', 'json', '--format', 'json'], BAD),
            (['targets', '--format', 'json'], GOOD),
            (['targets', '--format', 'xml'], BAD),
            (['clean'], GOOD),
            (['clean', 'extra'], BAD),
            (['--version'], GOOD),
            (['--help'], GOOD),
            (['certify', '--help'], GOOD),
            ([], BAD),
            (['frobnicate'], BAD),
            (['--bogus'], BAD),
        ]
    )


SESSIONS: list[list[str]] = []
"""The pytest arguments of every certification that passed validation and reached its (stub) session."""


SUBCOMMANDS = ('certify', 'report', 'diff', 'verify', 'matrix', 'rules', 'targets', 'clean')
TOKENS = [
    'certify',
    'report',
    'diff',
    'verify',
    'matrix',
    'rules',
    'targets',
    'clean',
    'memory',
    '-k',
    '-n',
    '--format',
]
TOKENS += ['--report', '--bundle', '--conformance-time-scale', '--anyio-backend', '--', '-', '--=', '-kexists']


def _anything() -> st.SearchStrategy[Case]:
    """Any short argv of known words and arbitrary text (no NUL or lone surrogate, which a real argv cannot hold)."""
    text = st.text(st.characters(exclude_characters='\x00', exclude_categories=['Cs']), max_size=12)
    words = st.lists(st.one_of(st.sampled_from(TOKENS), text), max_size=6)
    return words.filter(lambda argv: '--help' not in argv).map(lambda argv: (argv, ANY))


def _stub_session(pytest_args: list[str], plugins: list[object]) -> int:
    """Stands in for the certification's pytest session: the option values must have reached it intact."""
    SESSIONS.append(pytest_args)
    if '--conformance-time-scale' in pytest_args:
        assert float(pytest_args[pytest_args.index('--conformance-time-scale') + 1]) > 0
    return int(pytest.ExitCode.OK)


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = cli.main(argv)
    return status, out.getvalue(), err.getvalue()


def test_any_command_line_ends_in_a_known_status_without_traceback_or_leftovers(
    places: Places, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cwd, tmp = tmp_path / 'cwd', tmp_path / 'tmp'
    cwd.mkdir()
    tmp.mkdir()
    monkeypatch.chdir(cwd)
    monkeypatch.setenv('TMPDIR', str(tmp))
    monkeypatch.setattr(tempfile, 'tempdir', str(tmp))
    monkeypatch.setenv(privileges.CAPABILITIES_DROPPED, '1')  # in-process: never re-execute through setpriv
    monkeypatch.setattr(certifying, '_session', _stub_session)
    tried: dict[str, int] = {}
    started = time.monotonic()
    cases = (_certify(places, allow_bad=True), _certify(places, allow_bad=False), _reading(places), _others())

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(st.one_of(*cases, _anything()))
    def check(case: Case) -> None:
        argv, expects = case
        handlers = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
        kind = argv[0] if argv and argv[0] in SUBCOMMANDS else 'other'
        tried[kind] = tried.get(kind, 0) + 1
        status, stdout, stderr = _run(argv)
        context = f'{argv}: status {status}\nstdout: {stdout[-1500:]}\nstderr: {stderr[-1500:]}'
        assert status in (0, 1, 2, 3), context
        assert 'Traceback' not in stdout + stderr and 'internal error' not in stderr, context
        assert list(cwd.iterdir()) == [], context
        assert list(tmp.iterdir()) == [], context
        assert processes_of(tmp) == [], context
        assert {signum: signal.getsignal(signum) for signum in handlers} == handlers, context  # restored
        if expects == BAD:
            assert status == 2, context
            assert 'not certified' not in stdout + stderr, context
            assert len(stderr.strip().splitlines()) == 1, context
        elif expects == GOOD:
            assert status == 0, context
        shutil.rmtree(places.root / 'out', ignore_errors=True)  # a valid --report: the stub session writes nothing

    check()
    total = sum(tried.values())
    seconds = time.monotonic() - started
    print(f'tried {total} command lines in {seconds:.1f} s ({len(SESSIONS)} certifications ran): {tried}')
    assert total >= EXAMPLES // 2 and set(tried) >= {'certify', 'report', 'diff', 'verify', 'rules', 'clean'}
    assert len(SESSIONS) >= 10, 'too few valid certify command lines got past validation'
