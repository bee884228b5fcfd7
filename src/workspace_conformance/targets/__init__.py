"""Named certification targets: a backend with everything needed to certify it."""

from .base import Target, TargetError
from .certification import CertificationSpec, suite_for
from .loading import BUILTIN_TARGETS, resolve_target
from .local import LazyLocalBackend, local_target

__all__ = (
    'BUILTIN_TARGETS',
    'CertificationSpec',
    'LazyLocalBackend',
    'Target',
    'TargetError',
    'local_target',
    'resolve_target',
    'suite_for',
)
