"""Certifying a tool capability: what a tool target builds, and the `WorkspaceToolSuite` class for it."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest
from pydantic_ai.capabilities import AbstractCapability

from ..tools import ToolWorkspace, WorkspaceToolSuite, default_workspaces
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


def _harness(target: str, name: str, description: str, declared_limits: Mapping[str, str] | None = None) -> ToolTarget:
    return ToolTarget(
        name=target,
        description=description,
        build=lambda: harness_capability(target, name),
        declared_limits=declared_limits or {},
    )


TOOL_TARGETS: Mapping[str, ToolTarget] = {
    target.name: target
    for target in (
        _harness('harness-filesystem', 'FileSystem', "pydantic-ai-harness's FileSystem: file and search tools"),
        _harness(
            'harness-shell',
            'Shell',
            "pydantic-ai-harness's Shell: command tools",
            declared_limits={
                'no_silent_empty_toolset': 'finding F4 (docs/findings.md): no tools without commands, and no word'
            },
        ),
        _harness('harness-coder', 'Coder', "pydantic-ai-harness's Coder: file, search, shell and sub-agent tools"),
    )
}
"""The named tool targets: `workspace-conformance certify --tools harness-filesystem` and its siblings."""
