"""Test environments: the toolkit on the newest pydantic-ai, and on the oldest it supports (2.62)."""

from __future__ import annotations

import os
import shutil

import nox

nox.options.default_venv_backend = 'venv'
nox.options.sessions = ['lint', 'tests', 'compat']
nox.options.reuse_existing_virtualenvs = True

NEWEST = '2.68.0'
OLDEST = '2.62.0'
COMPAT_TESTS = [
    'tests/test_self_certification.py',
    'tests/test_upstream_parity.py',
    'tests/test_subclassing.py',
    'tests/test_compat.py',
]


DROP = '-dac_override,-dac_read_search'


def pytest(session: nox.Session, *args: str) -> None:
    """pytest; as root, without the capabilities that bypass file permissions, so permission rules run for real."""
    if os.geteuid() == 0 and shutil.which('setpriv'):
        prefix = ['setpriv', '--bounding-set', DROP, '--inh-caps', DROP]
        session.run(*prefix, 'python', '-m', 'pytest', *args, external=True)
    else:
        session.run('python', '-m', 'pytest', *args)


@nox.session
def lint(session: nox.Session) -> None:
    """Ruff and mypy --strict over the package, tests and scripts."""
    session.install('-e', '.[dev]', f'pydantic-ai-slim=={NEWEST}')
    session.run('ruff', 'check', 'src', 'tests', 'scripts', 'bench', 'noxfile.py')
    session.run('ruff', 'format', '--check', 'src', 'tests', 'scripts', 'bench', 'noxfile.py')
    session.run('mypy')


@nox.session
def tests(session: nox.Session) -> None:
    """The whole test suite on the newest pydantic-ai, in two xdist workers."""
    session.install('-e', '.[dev]', f'pydantic-ai-slim=={NEWEST}')
    pytest(session, '-n', '2', *session.posargs)


@nox.session
def compat(session: nox.Session) -> None:
    """Self-certification and drop-in parity on pydantic-ai-slim 2.62, where newer rules skip as not-applicable."""
    session.install('-e', '.[dev]', f'pydantic-ai-slim=={OLDEST}')
    pytest(session, '-n', '2', *COMPAT_TESTS, *session.posargs)
