"""Checks of option values, shared by `certify` and the pytest plugin: a bad value is a usage error, never a verdict.

Each check returns the value it accepts or raises `argparse.ArgumentTypeError` with what the option accepts, so
argparse (and pytest's option parser, which is argparse) reports it as one line naming the option.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

from _pytest.mark.expression import Expression

from .vocabulary import TOOL_CLAIMS, VERDICTS, Verdict

__all__ = (
    'FAIL_UNDER_INI',
    'FailUnder',
    'concurrency',
    'fail_under',
    'fail_under_of',
    'keyword_problem',
    'max_duration',
    'output_directory_problem',
    'time_scale',
    'tool_claims',
    'workers',
)

FAIL_UNDER_INI = 'conformance_fail_under'
"""The ini option of the verdict gate; `--conformance-fail-under` wins over it."""

_CERTIFY_KEYWORDS = ('TestCertification', 'test_certification.py', 'anyio', 'conformance_rule', 'usefixtures')
"""The names pytest's -k matches for every rule of `certify`'s generated suite, besides the rule's own test name."""
_THRESHOLDS: dict[str, Verdict] = {verdict: verdict for verdict in VERDICTS if verdict != 'not certified'}
"""What `--conformance-fail-under` accepts: a gate at `not certified` would pass every session."""
_MARKERS = ('xfail', 'skip', 'skipif', 'parametrize', 'filterwarnings')
"""Markers a target's suite may put on a rule (expected failures, skips): a -k naming one may select rules."""


def _finite_positive(text: str, not_a_number: str, out_of_range: str) -> float:
    """`text` as a finite number > 0, or an argparse error: the quoted text, then `not_a_number` or `out_of_range`."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f'{text!r}{not_a_number}') from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f'{text!r}{out_of_range}')
    return value


def time_scale(text: str) -> float:
    """A time scale: a finite number greater than 0 (3 gives a slow provider three times as long)."""
    return _finite_positive(
        text, ' is not a number: pass a finite number > 0, e.g. 3', ': pass a finite number > 0, e.g. 3'
    )


def tool_claims(text: str) -> tuple[str, ...]:
    """What a tool capability claims: `none`, or a comma-separated set of `bounded`, `contained`."""
    if text.strip() == 'none':
        return ()
    names = tuple(sorted({name.strip() for name in text.split(',') if name.strip()}))
    unknown = [name for name in names if name not in TOOL_CLAIMS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f'{text!r}: pass none, or a comma-separated set of {", ".join(TOOL_CLAIMS)} (unknown: {", ".join(unknown)})'
        )
    return names


def concurrency(text: str) -> int | str:
    """How many rules may run at once against one environment: `auto`, or a whole number from 1 (serial) to 256."""
    if text == 'auto':
        return text
    if not (text.isascii() and text.isdigit()) or not 1 <= int(text) <= 256:
        raise argparse.ArgumentTypeError(f'{text!r}: pass auto, or a whole number from 1 (one rule at a time) to 256')
    return int(text)


def max_duration(text: str) -> float:
    """A session deadline in seconds of wall time: a finite number greater than 0."""
    return _finite_positive(
        text, ' is not a number of seconds: pass one > 0, e.g. 900', ': pass a finite number of seconds > 0, e.g. 900'
    )


def fail_under(text: str) -> Verdict:
    """A verdict gate's threshold: `certified` or `partial`, the worst verdict that still passes."""
    threshold = _THRESHOLDS.get(text)
    if threshold is not None:
        return threshold
    raise argparse.ArgumentTypeError(f'{text!r}: pass certified or partial (the worst verdict that passes)')


class FailUnder(NamedTuple):
    """A session's verdict gate: the worst verdict that passes, and how the user set it (for the line that fails)."""

    threshold: Verdict
    setting: str


def fail_under_of(option: Verdict | None, ini: str) -> FailUnder | None:
    """The gate the command line (first) or the ini value sets, `None` when neither does; a bad ini value raises.

    The error is `argparse.ArgumentTypeError` naming the ini option, as for a bad command-line value.
    """
    if option is not None:
        return FailUnder(option, f'--conformance-fail-under {option}')
    text = ini.strip()
    if not text:
        return None
    try:
        return FailUnder(fail_under(text), f'{FAIL_UNDER_INI} = {text}')
    except argparse.ArgumentTypeError as error:
        raise argparse.ArgumentTypeError(f'ini option {FAIL_UNDER_INI}: {error}') from None


def workers(text: str) -> str:
    """A pytest-xdist worker count: a positive integer, or `auto` (one per CPU)."""
    if text == 'auto':
        return text
    if not (text.isascii() and text.isdigit()) or int(text) == 0:
        raise argparse.ArgumentTypeError(f'{text!r}: pass a positive integer or auto')
    return str(int(text))


def output_directory_problem(option: str, value: str) -> str | None:
    """Why `value` cannot be the directory `option` writes to, or `None` when it can; nothing is left on disk.

    An existing directory is probed with an unnamed temporary file; a missing one is created, with its missing
    parents, and removed again, so the check is the real one (as root, permission bits alone say nothing).
    """
    if not value:
        return f'{option}: pass a directory path'
    path = Path(value)
    try:
        if path.exists():
            if not path.is_dir():
                return f'{option} {value}: is a file, not a directory: pass a directory to write the report to'
            with tempfile.TemporaryFile(dir=path):
                pass
            return None
        created = _create_missing(path)
    except OSError as error:
        return f'{option} {value}: cannot write there ({error.strerror or error}): pass a writable directory'
    for directory in reversed(created):
        with contextlib.suppress(OSError):
            directory.rmdir()
    return None


def _create_missing(path: Path) -> list[Path]:
    """Create `path` and its missing parents; returns what was created, outermost first (removed on failure)."""
    missing = [path]
    for parent in path.absolute().parents:
        if parent.exists():
            break
        missing.append(parent)
    missing.reverse()
    created: list[Path] = []
    try:
        for directory in missing:
            directory.mkdir()
            created.append(directory)
    except OSError:
        for directory in reversed(created):
            with contextlib.suppress(OSError):
                directory.rmdir()
        raise
    return created


class _CallParameters(Exception):
    """-k named a call with parameters, which keyword expressions do not support."""


class _Matcher:
    """pytest's -k matching: `subname` matches when it is a case-insensitive substring of one of the names."""

    def __init__(self, names: list[str]) -> None:
        self.names = names

    def __call__(self, subname: str, /, **kwargs: str | int | bool | None) -> bool:
        if kwargs:
            raise _CallParameters(subname)
        wanted = subname.lower()
        return any(wanted in name for name in self.names)


def keyword_problem(expression: str, test_names: Iterable[str], loops: Iterable[str]) -> str | None:
    """Why `-k expression` cannot narrow a certification, or `None` when it selects at least one rule.

    The expression is evaluated as pytest's -k evaluates it (a case-insensitive substring of any of an item's
    names), on the names every rule of the generated suite has: its test name with the event loop, the class,
    the module and the markers.
    """
    if expression == '':
        return None  # pytest's -k '' selects everything
    try:  # pytest >= 8.4 raises SyntaxError, older ones their own ParseError
        compiled = Expression.compile(expression)
    except Exception as error:
        why = getattr(error, 'msg', None) or getattr(error, 'message', None) or str(error)
        return f'-k {expression!r}: not a pytest -k expression ({why}): e.g. -k "symlink and not remove"'
    loops = tuple(loops)
    for name in test_names:
        names = [f'{name}[{loop}]'.lower() for loop in loops]
        names += [keyword.lower() for keyword in (*_CERTIFY_KEYWORDS, *_MARKERS)]
        try:
            if compiled.evaluate(_Matcher(names)):
                return None
        except _CallParameters:
            return f'-k {expression!r}: keyword expressions take no call parameters: pass names only'
    return f'-k {expression!r} selects no rule: see `workspace-conformance rules` for their names'
