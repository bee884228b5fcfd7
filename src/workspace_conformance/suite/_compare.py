"""Where two byte strings or texts first differ, for the failure messages of the size rules."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ('first_difference',)


def first_difference(got: Sequence[object], expected: Sequence[object]) -> int:
    """The index of the first item where `got` and `expected` differ, or the shorter length when one is a prefix."""
    return next(
        (index for index, (a, b) in enumerate(zip(got, expected, strict=False)) if a != b),
        min(len(got), len(expected)),
    )
