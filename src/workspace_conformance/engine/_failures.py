"""How a rule's failure reads: `RuleFailure`, its framing by rule and clause, and exceptions as safe, clipped text."""

from __future__ import annotations

import contextlib
from types import TracebackType

from .._frames import machinery_hidden
from ._rule import Rule

__tracebackhide__ = machinery_hidden  # pytest leaves these frames out of a rule's failure (not with --tb=long)
__all__ = ('OBSERVED_LIMIT', 'ConformanceConfigError', 'RuleFailure', 'clip', 'framed', 'safe_str')

OBSERVED_LIMIT = 4000
"""Characters of an observation kept in a failure message; a backend's 100 MB output must not flood the report."""


class ConformanceConfigError(ValueError):
    """The suite's configuration (waivers, fixtures) is wrong; the message says how to fix it."""


class RuleFailure(AssertionError):
    """A rule's verdict on a backend: the rule, the clause it checks, and what was observed."""

    observed: str | None = None
    """What the rule observed, without the rule and clause its message frames it with (None: a message only)."""
    frames: tuple[str, ...] = ()
    """The backend's own frames what the rule saw fail passed through (`file:line in function`), innermost last."""
    seen: TracebackType | None = None
    """The traceback of what the rule saw fail: pytest shows it, and not the guard's, as the failure's one traceback."""
    loop_tie: str | None = None
    """The other event loop the backend's error shows its code is tied to (asyncio-only code on trio), if any."""
    advisory: str | None = None
    """Why the failure only advises (its rule is `should`, or its claim was not declared); None: it fails the rule."""
    raised_by: str | None = None
    """The backend operation whose error ended the rule (`write_bytes`), if its error did: a `broken` candidate."""


def safe_str(error: BaseException, *, named: bool = True) -> str:
    """`Type: message` for an exception (the message alone when not `named`), even one whose `__str__` raises.

    Its notes follow the message (Hypothesis's examples).

    An exception group (a task group's) also names what it holds: `ExceptionGroup: ... [TimeoutError: ...]`, and a
    group around a single exception leads with it: `TimeoutError: ... (inside ExceptionGroup: ...)`.
    """
    try:
        text = str(error)
    except Exception:
        text = '<str() of this exception raised>'
    leaf = _only_leaf(error)
    if leaf is not None and leaf is not error:
        return f'{safe_str(leaf)} (inside {type(error).__name__}: {text})'
    if isinstance(error, BaseExceptionGroup):
        inner = [safe_str(exception) for exception in error.exceptions[:3]]
        more = '; ...' if len(error.exceptions) > 3 else ''
        text = f'{text} [{"; ".join(inner)}{more}]'
    notes = getattr(error, '__notes__', None)
    if isinstance(notes, list) and notes:
        with contextlib.suppress(Exception):  # a note whose str() raises is left out
            text = '\n'.join([text, *(str(note) for note in notes)])
    if not named and text:
        return text
    return f'{type(error).__name__}: {text}' if text else type(error).__name__


def _only_leaf(error: BaseException) -> BaseException | None:
    """The one exception an exception group (nested or not) holds, `error` itself if no group, else None."""
    while isinstance(error, BaseExceptionGroup):
        if len(error.exceptions) != 1:
            return None
        error = error.exceptions[0]
    return error


def clip(text: str, limit: int = OBSERVED_LIMIT) -> str:
    """`text`, or its beginning and end with the number of characters cut between them when it is longer."""
    if len(text) <= limit:
        return text
    tail = limit // 5
    head = limit - tail
    return f'{text[:head]} [... {len(text) - head - tail:,} characters cut ...] {text[-tail:]}'


def framed(rule: Rule, observed: str) -> RuleFailure:
    """The failure of `rule`: its message quotes the clause, and what was observed is kept apart as data too."""
    kept = clip(observed)
    failure = RuleFailure(f'[{rule.qualified}] contract: "{rule.clause}"\nobserved: {kept}')
    failure.observed = kept
    return failure
