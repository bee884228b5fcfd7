"""The mutant gallery, one module per area of the suite (plus `doubles`); `load_all()` imports them all.

A mutant lives in the module of the area of the (first) rule it kills; helpers several areas use live in
`_shared`. Every mutant works only inside the run directory it is given: the ones that delete or kill check that
what they touch is inside it (or that a process is their own), so a bug can destroy nothing else.
"""

from __future__ import annotations

import importlib
import pkgutil

from ..registry import (
    CAPABILITY_MUTANTS,
    ISOLATION_MUTANTS,
    MUTANTS,
    TOOL_MUTANTS,
    CapabilityMutant,
    IsolationMutant,
    Mutant,
    ToolMutant,
)


def load_all() -> list[Mutant]:
    """Every mutant of the gallery, after importing each of its modules (which registers their mutants)."""
    for module in pkgutil.iter_modules(__path__):
        if not module.name.startswith('_'):
            importlib.import_module(f'{__name__}.{module.name}')
    return list(MUTANTS)


def load_capability_mutants() -> list[CapabilityMutant]:
    """Every capability mutant of the gallery (its `capability` module), after importing the gallery."""
    load_all()
    return list(CAPABILITY_MUTANTS)


def load_tool_mutants() -> list[ToolMutant]:
    """Every tool mutant of the gallery (its `tools` module), after importing the gallery."""
    load_all()
    return list(TOOL_MUTANTS)


def load_isolation_mutants() -> list[IsolationMutant]:
    """Every isolation mutant of the gallery (its `isolation` module), after importing the gallery."""
    load_all()
    return list(ISOLATION_MUTANTS)
