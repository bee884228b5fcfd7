"""Hypothesis inside async rules: named profiles, and a runner that drives the sync engine from a worker thread."""

from __future__ import annotations

import functools
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

import anyio
import anyio.from_thread
import anyio.to_thread
from hypothesis import HealthCheck, settings

__all__ = ('PROFILES', 'call_in_loop', 'profile_settings', 'run_in_worker')

T = TypeVar('T')

_QUIET = [HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large]
PROFILES: dict[str, settings] = {
    # Fast and repeatable: the same examples on every run, so CI is stable.
    'ci': settings(
        max_examples=12,
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=_QUIET,
        stateful_step_count=12,
    ),
    # Thorough and repeatable: what a certificate is built on.
    'certify': settings(
        max_examples=60,
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=_QUIET,
        stateful_step_count=25,
    ),
    # Exploratory: new random examples each run, failures remembered in Hypothesis's example database.
    'dev': settings(
        max_examples=40, derandomize=False, deadline=None, suppress_health_check=_QUIET, stateful_step_count=20
    ),
}
"""The Hypothesis profiles rules run under; `--conformance-profile NAME` picks one."""


def profile_settings(name: str) -> settings:
    """The settings of a named profile, or a clear error listing the names."""
    try:
        return PROFILES[name]
    except KeyError:
        raise ValueError(f'unknown conformance profile {name!r}: use one of {", ".join(PROFILES)}') from None


def call_in_loop(function: Callable[..., Coroutine[Any, Any, T]], *args: Any, **kwargs: Any) -> T:
    """From a Hypothesis worker thread, await `function(*args, **kwargs)` in the rule's event loop."""
    return anyio.from_thread.run(functools.partial(function, *args, **kwargs))


async def run_in_worker(engine: Callable[[], None]) -> None:
    """Run a sync Hypothesis engine (`@given` test or state machine) in a thread; its examples call back here."""
    await anyio.to_thread.run_sync(engine, abandon_on_cancel=True)
