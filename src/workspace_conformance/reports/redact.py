"""Keep secrets out of reports: the runner's environment values, and anything shaped like a credential."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from ..vocabulary import SECRET_NAME

__all__ = ('REDACTED', 'Redactor')

REDACTED = '[redacted]'
_CREDENTIAL_SHAPES = re.compile(
    r'(?:sk|pk|rk)[-_][A-Za-z0-9_-]{12,}'  # OpenAI / Stripe style keys
    r'|e2b_[A-Za-z0-9]{16,}'
    r'|gh[pousr]_[A-Za-z0-9]{20,}'
    r'|xox[abprs]-[A-Za-z0-9-]{10,}'
    r'|AKIA[0-9A-Z]{16}'
    r'|eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}'  # JWT
    r'|(?i:bearer)\s+[A-Za-z0-9._~+/-]{12,}=*'
    r'|(?i:(?:api[_-]?key|token|secret|password|passwd)\s*[=:]\s*)[^\s\'",;]{6,}'
)
_MIN_VALUE = 6
"""Shorter environment values (`1`, `true`, `C.UTF-8`) are too common to redact without mangling text."""


class Redactor:
    """Replaces, in any text: every value of the runner's environment that could carry data, and credential shapes.

    Values that are paths or lists of paths (`PATH`, `HOME`, `PWD`) are kept: they are not secrets, and the
    evidence of a failure is full of paths under them. Any variable whose name looks secret is always redacted.
    """

    def __init__(self, environment: Mapping[str, str] | None = None) -> None:
        source = os.environ if environment is None else environment
        values = {
            value
            for name, value in source.items()
            if len(value) >= _MIN_VALUE and (SECRET_NAME.search(name) or not _looks_like_paths(value))
        }
        # Longest first, so a value containing another is replaced whole.
        self._values = sorted(values, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for value in self._values:
            if value in text:
                text = text.replace(value, REDACTED)
        return _CREDENTIAL_SHAPES.sub(REDACTED, text)


def _looks_like_paths(value: str) -> bool:
    return all(part.startswith(('/', '~', '.')) or not part for part in value.split(':'))
