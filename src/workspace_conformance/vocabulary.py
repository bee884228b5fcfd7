"""The words the suite and the reports share, each written once: skip kinds, and the keys outcomes travel under."""

from __future__ import annotations

from typing import Literal, get_args

__all__ = ('OUTCOME_PROPERTY', 'SKIP_KINDS', 'SkipKind')

SkipKind = Literal['not-applicable', 'declared-limit', 'fixture-missing', 'environment', 'runner', 'overridden']
"""Why a rule did not run: outside the backend's scope (`not-applicable`), or a gap of one of the other kinds."""
SKIP_KINDS: tuple[SkipKind, ...] = get_args(SkipKind)
OUTCOME_PROPERTY = 'workspace_conformance_outcome'
"""The `user_properties` key under which the suite records a rule's classified skip: `{'skip_kind', 'reason'}`."""
