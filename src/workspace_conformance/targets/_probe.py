"""Short, bounded probes of the machine a target needs (a program on PATH, a daemon that answers)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
from collections.abc import Sequence

__all__ = ('first_line', 'missing_module', 'missing_program', 'probe')


def first_line(text: str) -> str:
    """The first non-empty line of `text`, stripped, or `''`."""
    return next((line.strip() for line in text.splitlines() if line.strip()), '')


def probe(argv: Sequence[str], *, timeout: float = 20.0, env: dict[str, str] | None = None) -> tuple[bool, str]:
    """Run `argv` to completion within `timeout`: (exited 0, first line of its error output or a reason)."""
    try:
        done = subprocess.run(
            list(argv),
            capture_output=True,
            text=True,
            timeout=timeout,
            env={**os.environ, **(env or {})},
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except FileNotFoundError:
        return False, f'{argv[0]} is not installed'
    except subprocess.TimeoutExpired:
        return False, f'`{" ".join(argv[:2])}` did not answer within {timeout:g} s'
    return done.returncode == 0, first_line(done.stderr) or first_line(done.stdout)


def missing_program(name: str, package: str) -> str | None:
    """`None` when `name` is on PATH, else a line naming the package that installs it."""
    return None if shutil.which(name) else f'no `{name}` on PATH (install {package})'


def missing_module(module: str, install: str) -> str | None:
    """`None` when `module` can be imported, else a line saying what to install."""
    return None if importlib.util.find_spec(module) is not None else f'{module} is not installed: pip install {install}'
