"""A command writing past every common output cap, on both streams, and the checks of what a backend gives back."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic_ai.workspaces import CommandResult, WorkspaceBackend, WorkspaceOutputLimitError

from ..authoring import commands_of

__all__ = (
    'CAPPED_STDERR',
    'CAPPED_STDOUT',
    'OUTPUT_PAST_CAPS',
    'PAST_THE_CAPS',
    'Written',
    'check_output_limit_error',
    'past_the_caps',
)

OUTPUT_PAST_CAPS = 12
"""MiB one command writes to check output caps: past `LocalWorkspaceBackend`'s 10 MiB and common provider caps."""
STDERR_BEFORE_CAPS = 128
"""KiB the same command writes to stderr first, so both streams have output within any cap worth the name."""


@dataclass(frozen=True)
class Written:
    """What one stream of the output-cap writer carries: a marker, then `size` copies of `fill`."""

    name: str
    marker: str
    fill: str
    size: int

    def prefix(self, length: int) -> str:
        """The first `length` characters the stream wrote."""
        return (self.marker + self.fill * max(0, length - len(self.marker)))[:length]

    def whole(self) -> str:
        return self.prefix(len(self.marker) + self.size)

    def preview_problem(self, preview: object, limit: int) -> str | None:
        """Why `preview` is not a captured beginning of this stream bounded by `limit`, or None when it is one."""
        if not isinstance(preview, str):
            return f'the {self.name} preview is a {type(preview).__name__}, not a str'
        if len(preview) > limit:
            return f'the {self.name} preview holds {len(preview)} characters, more than the limit {limit}'
        if preview != self.prefix(len(preview)):
            return f'the {self.name} preview {preview[:60]!r} is not the beginning of what the command wrote there'
        return None


CAPPED_STDERR = Written('stderr', 'err-begins:', 'b', STDERR_BEFORE_CAPS * 1024)
CAPPED_STDOUT = Written('stdout', 'out-begins:', 'a', OUTPUT_PAST_CAPS * 1024 * 1024)
PAST_THE_CAPS = (
    f"printf '{CAPPED_STDERR.marker}' >&2; "
    f'dd if=/dev/zero bs=1024 count={STDERR_BEFORE_CAPS} 2>/dev/null | tr "\\000" {CAPPED_STDERR.fill} >&2; '
    f"printf '{CAPPED_STDOUT.marker}'; "
    f'dd if=/dev/zero bs=1048576 count={OUTPUT_PAST_CAPS} 2>/dev/null | tr "\\000" {CAPPED_STDOUT.fill}'
)
"""All of stderr's output first, then stdout's: 128 KiB within any cap, then 12 MiB past the common ones."""


async def past_the_caps(backend: WorkspaceBackend) -> CommandResult | WorkspaceOutputLimitError:
    """The result of the output-cap writer, or the `WorkspaceOutputLimitError` it raised."""
    try:
        return await commands_of(backend).run(['sh', '-c', PAST_THE_CAPS])
    except WorkspaceOutputLimitError as error:
        return error


def check_output_limit_error(error: WorkspaceOutputLimitError) -> None:
    """Fail unless `error` has a positive int `limit` and previews that are captured beginnings of both streams."""
    limit = error.limit
    assert type(limit) is int and limit > 0, f'the output limit error gave limit={limit!r}, not a positive int'
    for stream, preview in ((CAPPED_STDERR, error.stderr), (CAPPED_STDOUT, error.stdout)):
        problem = stream.preview_problem(preview, limit)
        assert problem is None, f'{problem} (the output limit error of {OUTPUT_PAST_CAPS} MiB of output)'
    # stderr wrote first, so it has output within any cap; stdout does once the cap is past stderr's output.
    assert error.stderr, 'the output limit error held an empty stderr preview, though stderr wrote before stdout did'
    within = len(CAPPED_STDERR.whole())
    assert error.stdout or limit <= within, (
        f'the output limit error (limit={limit}) held an empty stdout preview, though the command wrote only '
        f'{within} characters to stderr before writing to stdout'
    )
