"""Rules on what a run records about its workspace: the ref in its spans, and no credential in the ref or records.

The ref is recorded in the message history and in the run's OpenTelemetry spans, which people read and store;
the spans come from pydantic-ai's own instrumentation, with a tracer provider of the rule's own
(`opentelemetry-sdk`), and with `include_content=False`, which must still record the ref.
"""

from __future__ import annotations

import contextlib
import importlib.util
from collections.abc import Iterator, Sequence
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.models.instrumented import InstrumentationSettings
from pydantic_ai.workspaces import WorkspaceRef

from ..authoring import first_use, rule, runners_canary, skip
from ._support import run_in_agent

__all__ = ('RecordRules',)

NO_SDK = 'opentelemetry-sdk is not installed (`pip install opentelemetry-sdk`), so no span can be recorded'


def has_sdk() -> bool:
    """Whether `opentelemetry-sdk` is importable, to record spans."""
    return importlib.util.find_spec('opentelemetry.sdk') is not None


@contextlib.contextmanager
def _traced(spans: list[dict[str, Any]]) -> Iterator[Any]:
    """An agent hook instrumenting runs with `include_content=False`; `spans` gets their attributes after the block."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))

    @contextlib.contextmanager
    def instrumented(agent: Agent[Any, str]) -> Iterator[None]:
        agent.instrument = InstrumentationSettings(tracer_provider=provider, include_content=False)
        yield

    try:
        yield instrumented
    finally:
        spans.extend({'name': span.name, **(span.attributes or {})} for span in exporter.get_finished_spans())
        provider.shutdown()


async def recorded_run(
    capability: AbstractCapability[Any], deps: object
) -> tuple[WorkspaceRef, Any, list[dict[str, Any]] | None]:
    """A run whose tool uses the workspace: its ref, its result, and its spans' attributes (None without the SDK)."""
    if not has_sdk():
        ref, result = await run_in_agent(capability, first_use, deps=deps)
        return ref, result, None
    spans: list[dict[str, Any]] = []
    with _traced(spans) as instrumented:
        ref, result = await run_in_agent(capability, first_use, deps=deps, agent_hook=instrumented)
    return ref, result, spans


def _found(secret: str, where: str, text: str) -> str | None:
    """`where` and the secret's first characters, if `text` contains it (the secret itself stays out of the message)."""
    return f'{where} contains a secret ({secret[:3]}..., {len(secret)} characters)' if secret in text else None


class RecordRules:
    """Rules on the ref a run records in its history and spans."""

    @rule(area='runs', must='A16')
    async def test_the_run_span_records_the_workspace_ref(
        self, capability: AbstractCapability[Any], deps: object
    ) -> None:
        """The agent run span records `pydantic_ai.workspace.provider` and `.id` even with `include_content=False`."""
        if not has_sdk():
            skip('environment', NO_SDK)
        ref, _, spans = await recorded_run(capability, deps)
        runs = [span for span in spans or () if span.get('gen_ai.operation.name') == 'invoke_agent']
        assert runs, f'the run recorded no agent run span, only {[span["name"] for span in spans or ()]}'
        for span in runs:
            recorded = (span.get('pydantic_ai.workspace.provider'), span.get('pydantic_ai.workspace.id'))
            assert recorded == (ref.provider, ref.id), (
                f'the run span {span["name"]!r} records workspace provider and id {recorded}, the run used '
                f'{(ref.provider, ref.id)}'
            )

    @rule(area='hygiene', alone=True, must='S06')
    async def test_the_ref_and_what_records_it_carry_no_secret(
        self, capability: AbstractCapability[Any], deps: object, secrets: Sequence[str]
    ) -> None:
        """A run's `WorkspaceRef`, its stored message history and its spans hold none of `secrets`."""
        with runners_canary() as canary:
            ref, result, spans = await recorded_run(capability, deps)
        places = {
            'the ref id': ref.id,
            'the ref provider': ref.provider,
            'the stored message history': result.all_messages_json().decode(),
            **{f'the span {span["name"]!r}': repr(sorted(span.items())) for span in spans or ()},
        }
        watched = [secret for secret in {*secrets, canary} if secret]
        found = [seen for secret in watched for where, text in places.items() if (seen := _found(secret, where, text))]
        assert not found, '; '.join(found[:5])
