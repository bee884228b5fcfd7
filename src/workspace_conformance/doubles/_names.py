"""The provider name on every ref an `InMemoryProvider` creates, below both the provider and its capability."""

from __future__ import annotations

__all__ = ('PROVIDER',)

PROVIDER = 'in-memory-provider'
"""The `provider` of every ref an `InMemoryProvider` creates; `ProviderCapability` recognizes refs by it."""
