"""Certifying a tool capability: what a tool target builds, and the `WorkspaceToolSuite` class for it."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest
from pydantic_ai.capabilities import AbstractCapability

from ..tools import ToolWorkspace, WorkspaceToolSuite, default_workspaces
from ..vocabulary import TOOL_CLAIMS
from .base import TargetNotRunnable
from .capability import finish_suite

__all__ = ('TOOL_TARGETS', 'ToolTarget', 'harness_capability', 'tool_suite_for')


@dataclass(frozen=True, kw_only=True)
class ToolTarget:
    """Everything needed to certify one tool capability: `build` returns a new capability for each rule."""

    name: str
    description: str
    build: Callable[[], AbstractCapability[Any]]
    tool_calls: Mapping[str, Any] = field(default_factory=dict)
    workspaces: Sequence[str] | None = None
    """The names of the default workspaces to run in; None: all four."""
    declared_limits: Mapping[str, str] = field(default_factory=dict)
    expected_failures: Mapping[str, str] = field(default_factory=dict)
    claims: frozenset[str] = frozenset()
    """What the capability claims beyond the contract (`vocabulary.TOOL_CLAIMS`); the rules of a claim made bind."""
    claims_source: str | None = None
    """Where the capability's author documents its claims (shown by certify), if anywhere."""


def tool_suite_for(
    target: ToolTarget,
    *,
    only: Iterable[str] | None = None,
    expected_failures: Mapping[str, str] | None = None,
    time_scale: float | None = None,
    name: str | None = None,
    summary: bool = True,
) -> type[WorkspaceToolSuite]:
    """The one `WorkspaceToolSuite` subclass for a tool target (`certify --tools`, the mutant gate)."""
    chosen = [where for where in default_workspaces() if target.workspaces is None or where.name in target.workspaces]
    unknown = set(target.workspaces or ()) - {where.name for where in default_workspaces()}
    if unknown:
        raise ValueError(f'tool target {target.name!r} names unknown workspaces: {sorted(unknown)}')
    unclaimable = sorted(target.claims - set(TOOL_CLAIMS))
    if unclaimable:
        raise ValueError(f'tool target {target.name!r} claims {unclaimable}: the claims are {list(TOOL_CLAIMS)}')

    class TestTools(WorkspaceToolSuite):
        conformance_summary = summary

        @pytest.fixture
        def capability(self) -> AbstractCapability[Any]:
            return target.build()

        @pytest.fixture
        def tool_calls(self) -> Mapping[str, Any]:
            return target.tool_calls

        @pytest.fixture
        def workspaces(self) -> Sequence[ToolWorkspace]:
            return chosen

        @pytest.fixture
        def claims(self) -> frozenset[str]:
            return target.claims

    waived = target.expected_failures if expected_failures is None else expected_failures
    finish_suite(TestTools, target.declared_limits, waived, only=only, time_scale=time_scale)
    TestTools.__name__ = TestTools.__qualname__ = name or f'TestTools[{target.name}]'
    return TestTools


def harness_capability(target: str, name: str) -> AbstractCapability[Any]:
    """`pydantic_ai_harness.<name>()`, or `TargetNotRunnable` naming the package when the harness is not installed."""
    try:
        import pydantic_ai_harness
    except ImportError:
        raise TargetNotRunnable(
            target, 'pydantic-ai-harness is not installed here: pip install pydantic-ai-harness'
        ) from None
    built: AbstractCapability[Any] = getattr(pydantic_ai_harness, name)()
    return built


def _harness(
    target: str, name: str, description: str, claims: Iterable[str] = (), source: str | None = None
) -> ToolTarget:
    return ToolTarget(
        name=target,
        description=description,
        build=lambda: harness_capability(target, name),
        claims=frozenset(claims),
        claims_source=source,
    )


TOOL_TARGETS: Mapping[str, ToolTarget] = {
    target.name: target
    for target in (
        _harness(
            'harness-filesystem',
            'FileSystem',
            "pydantic-ai-harness's FileSystem: file and search tools",
            claims=('bounded', 'contained'),
            source="FileSystem's docstring: `root_dir` bounds the file tools, checked as written and once symlinks "
            'are resolved; reads stop at `max_read_lines`',
        ),
        # Shell's docstring: "not a security boundary"; it claims nothing. Finding F4 (no tools without commands,
        # and no word) is the advisory of `no_silent_empty_toolset`, a should rule.
        _harness('harness-shell', 'Shell', "pydantic-ai-harness's Shell: command tools"),
        _harness(
            'harness-coder',
            'Coder',
            "pydantic-ai-harness's Coder: file, search, shell and sub-agent tools",
            claims=('bounded',),
            source="Coder's module: its tool outputs go through bounded truncation; its Shell is no boundary",
        ),
    )
}
"""The named tool targets: `workspace-conformance certify --tools harness-filesystem` and its siblings."""
