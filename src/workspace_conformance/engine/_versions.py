"""The installed pydantic-ai, whose contract a rule may postdate."""

from __future__ import annotations

import importlib.metadata

__all__ = ('pydantic_ai_at_least', 'pydantic_ai_version')


def pydantic_ai_version() -> str:
    """The installed pydantic-ai-slim version (or pydantic-ai's, when only that is installed)."""
    try:
        return importlib.metadata.version('pydantic-ai-slim')
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - installed as pydantic-ai only
        return importlib.metadata.version('pydantic-ai')


def pydantic_ai_at_least(minimum: tuple[int, int]) -> bool:
    """Whether the installed pydantic-ai's contract is at least `minimum` (major, minor)."""
    parts = pydantic_ai_version().split('.')
    return (int(parts[0]), int(parts[1])) >= minimum
