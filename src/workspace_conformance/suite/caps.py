"""Rules at the sizes where real providers chunk, page or cap: file transfers, command output and listings.

The sizes are the ones provider SDKs document:

- files, 1 MiB: the default request body limit of common front proxies (nginx's `client_max_body_size`);
- files and output, 4 MiB: gRPC's default largest message, so a gRPC file or exec API sends one message per 4 MiB;
- files and output, 8 MiB: the part size of multipart uploads in the AWS SDKs (boto3's `multipart_chunksize`);
- files, 16 MiB: two such parts, and the largest HTTP/2 frame (2^24 - 1 bytes, RFC 9113);
- output, 1 MiB: Node's `child_process` default `maxBuffer`;
- listings, 1,000 and 5,000 entries: one page of S3's `ListObjectsV2` and the largest page of Azure's List Blobs.

Each file size is tried one byte either side too: a chunking bug shows where the last chunk is one byte, full, or one
byte short. File sizes are checked where the backend has file methods of its own, where a provider's file API chunks
and caps: on a commands-only backend pydantic-ai's shell-derived filesystem moves every file in commands of at most
64 KiB, whatever its size, and `large_file_round_trip` already drives 8 MiB through those commands.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from pydantic_ai.workspaces import (
    CommandResult,
    SupportsCommands,
    Workspace,
    WorkspaceBackend,
    WorkspaceOutputLimitError,
)

from ..authoring import commands_of, paths, rule, scratch, workspace_of
from ._compare import first_difference
from ._entries import entry_names, make_entries

__all__ = ('CapRules',)

MiB = 1024 * 1024
LINE = 8
"""Bytes of one line of generated output: a seven-digit number and a newline, so every line says where it belongs."""
PAGE = 1000
"""Entries in one page of S3's `ListObjectsV2`."""
LARGEST_PAGE = 5000
"""Entries in the largest page of Azure's List Blobs."""
SEED = 20261204


def either_side(mebibytes: int) -> tuple[int, int, int]:
    """The sizes one byte under, at and one byte over `mebibytes` MiB."""
    return mebibytes * MiB - 1, mebibytes * MiB, mebibytes * MiB + 1


def spelled(size: int) -> str:
    """`size` bytes as a MiB count and its offset: '8 MiB + 1'."""
    mebibytes = (size + MiB // 2) // MiB
    offset = size - mebibytes * MiB
    return f'{mebibytes} MiB' + (f' {"+" if offset > 0 else "-"} {abs(offset)}' if offset else '')


async def _stored(backend: WorkspaceBackend, path: str) -> str:
    """What the backend holds at `path`, by `wc -c` where it runs commands: tells a lossy write from a lossy read."""
    if not isinstance(backend, SupportsCommands):
        return ''
    try:
        counted = await commands_of(backend).run(['wc', '-c', path])
    except Exception:  # a diagnostic only: the rule has already failed
        return ''
    words = counted.stdout.split()
    if counted.exit_code != 0 or not words or not words[0].isdigit():
        return ''
    return f'; `wc -c` counts {words[0]} bytes in the stored file'


async def _round_trips(backend: WorkspaceBackend, mebibytes: int) -> None:
    """Write and read back files one byte under, at and over `mebibytes` MiB; fail naming every size that changed."""
    workspace: Workspace = workspace_of(backend)
    sizes = either_side(mebibytes)
    largest = random.Random(SEED + mebibytes).randbytes(sizes[-1])
    problems: list[str] = []
    async with scratch(workspace) as root:
        for size in sizes:
            data = largest[:size]
            path = paths.join(root, f'file-of-{size}-bytes')
            await workspace.write_bytes(path, data)
            back = await workspace.read_bytes(path)
            if back != data:
                first = first_difference(back, data)
                problems.append(
                    f'{spelled(size)} ({size} bytes) read back as {len(back)} bytes, first difference at byte '
                    f'{first}{await _stored(backend, path)}'
                )
            await workspace.remove(path)  # the next size's file is at most 16 MiB + 1; never hold all of them
    assert not problems, 'files at a provider cap came back changed: ' + '; '.join(problems)


FIRST_LINE = 1_000_000
"""The number on the first line of generated output: lines up to 8 MiB all have seven digits."""


def _lines(size: int) -> str:
    """The first `size` characters of the generated output: line `i` is `FIRST_LINE + i` and a newline."""
    return ''.join(f'{FIRST_LINE + index}\n' for index in range(size // LINE))


_WRITER = (
    'last=$((1000000 + $1 - 1)); '
    'if command -v seq >/dev/null 2>&1; then seq 1000000 "$last"; '
    'else awk -v last="$last" \'BEGIN { for (i = 1000000; i <= last; i++) print i }\'; fi'
)
"""Writes `$1` numbered lines of 8 bytes (`seq`, else POSIX `awk`): made in the environment, not sent to it."""


async def _output_of(backend: WorkspaceBackend, size: int, stream: str) -> CommandResult | WorkspaceOutputLimitError:
    """The result of writing `size` bytes of numbered lines to `stream` alone, or the output limit error it raised."""
    script = f'{{ {_WRITER}; }} >&2' if stream == 'stderr' else _WRITER
    try:
        return await commands_of(backend).run(['sh', '-c', script, 'sh', str(size // LINE)])
    except WorkspaceOutputLimitError as error:
        return error


def _output_problem(
    outcome: CommandResult | WorkspaceOutputLimitError, size: int, stream: str, expected: str
) -> str | None:
    """Why `outcome` is neither `size` bytes returned whole on `stream` nor an honest output limit error, or None."""
    what = f'{spelled(size)} on {stream} alone'
    if isinstance(outcome, WorkspaceOutputLimitError):
        limit = outcome.limit
        if type(limit) is not int or limit <= 0:
            return f'{what} raised an output limit error with limit={limit!r}, not a positive int'
        if limit >= size:
            return f'{what} raised an output limit error whose limit {limit} is not below the {size} bytes written'
        preview = outcome.stderr if stream == 'stderr' else outcome.stdout
        if not isinstance(preview, str) or preview != expected[: len(preview)] or len(preview) > limit:
            return f'{what} raised an output limit error whose {stream} preview is not a beginning of the output'
        return None
    got = outcome.stderr if stream == 'stderr' else outcome.stdout
    other = outcome.stdout if stream == 'stderr' else outcome.stderr
    if outcome.exit_code != 0:
        return f'{what}: the writer exited {outcome.exit_code} (stderr {outcome.stderr[:200]!r})'
    if got != expected:
        first = first_difference(got, expected)
        return (
            f'{what} came back as a success holding {len(got)} characters of {len(expected)}, first difference at '
            f'{first} (line {first // LINE})'
        )
    if other:
        return f'{what} came back with {len(other)} characters on the other stream, which the command never wrote to'
    return None


async def _outputs(backend: WorkspaceBackend, mebibytes: int) -> None:
    """Write `mebibytes` MiB to stdout alone, then to stderr alone; each is whole or an honest output limit error."""
    size = mebibytes * MiB
    expected = _lines(size)
    problems = []
    for stream in ('stdout', 'stderr'):
        problem = _output_problem(await _output_of(backend, size, stream), size, stream, expected)
        if problem:
            problems.append(problem)
    assert not problems, '; '.join(problems)


async def _listings(backend: WorkspaceBackend, counts: Sequence[int], has_real_posix_shell: bool) -> None:
    """Directories of each of `counts` entries list every entry exactly once."""
    workspace = workspace_of(backend)
    problems: list[str] = []
    async with scratch(workspace) as root:
        for count in counts:
            directory = paths.join(root, f'listing-of-{count}')
            names = entry_names(count)
            await make_entries(backend, directory, count, has_real_posix_shell)
            listed = [entry.name for entry in await workspace.list_dir(directory)]
            missing, extra = sorted(names - set(listed)), sorted(set(listed) - names)
            if missing or extra or len(listed) != count:
                problems.append(
                    f'{count} entries listed as {len(listed)} ({len(set(listed))} distinct): missing {len(missing)} '
                    f'(e.g. {missing[:3]}), unexpected {extra[:3]}'
                )
    assert not problems, 'listings at a page size came back incomplete: ' + '; '.join(problems)


class CapRules:
    """Rules at providers' chunk, page and cap sizes: files either side of each, output at each, listings at pages."""

    @rule(area='files', requires=['filesystem', 'native_files'], since='0.3.0', timeout=180, must='B33')
    async def test_files_either_side_of_1_mib_round_trip(self, backend: WorkspaceBackend) -> None:
        """Files of 1 MiB and one byte either side read back byte for byte: a common proxy's request body limit."""
        await _round_trips(backend, 1)

    @rule(area='files', requires=['filesystem', 'native_files'], since='0.3.0', timeout=180, must='B33')
    async def test_files_either_side_of_4_mib_round_trip(self, backend: WorkspaceBackend) -> None:
        """Files of 4 MiB and one byte either side read back byte for byte: the largest default gRPC message."""
        await _round_trips(backend, 4)

    @rule(area='files', requires=['filesystem', 'native_files'], since='0.3.0', timeout=180, must='B33')
    async def test_files_either_side_of_8_mib_round_trip(self, backend: WorkspaceBackend) -> None:
        """Files of 8 MiB and one byte either side read back byte for byte: one multipart upload part."""
        await _round_trips(backend, 8)

    @rule(area='files', requires=['filesystem', 'native_files'], since='0.3.0', timeout=240, must='B33')
    async def test_files_either_side_of_16_mib_round_trip(self, backend: WorkspaceBackend) -> None:
        """Files of 16 MiB and one byte either side read back byte for byte: two parts, and past an HTTP/2 frame."""
        await _round_trips(backend, 16)

    @rule(area='commands', requires=['commands', 'posix_shell'], since='0.3.0', must='B28')
    async def test_output_of_1_mib_is_whole_or_an_output_limit_error(self, backend: WorkspaceBackend) -> None:
        """1 MiB on stdout alone, then on stderr alone, is returned whole or raises `WorkspaceOutputLimitError`.

        Never a success cut short: an error's `limit` is below what was written and its preview is the output's
        beginning.
        """
        await _outputs(backend, 1)

    @rule(area='commands', requires=['commands', 'posix_shell'], since='0.3.0', must='B28')
    async def test_output_of_4_mib_is_whole_or_an_output_limit_error(self, backend: WorkspaceBackend) -> None:
        """4 MiB on stdout alone, then on stderr alone, is returned whole or raises `WorkspaceOutputLimitError`."""
        await _outputs(backend, 4)

    @rule(area='commands', requires=['commands', 'posix_shell'], since='0.3.0', timeout=90, must='B28')
    async def test_output_of_8_mib_is_whole_or_an_output_limit_error(self, backend: WorkspaceBackend) -> None:
        """8 MiB on stdout alone, then on stderr alone, is returned whole or raises `WorkspaceOutputLimitError`."""
        await _outputs(backend, 8)

    @rule(area='files', requires=['filesystem'], since='0.3.0', timeout=120, must='B39')
    async def test_listings_of_one_page_and_one_more_are_complete(
        self, backend: WorkspaceBackend, has_real_posix_shell: bool
    ) -> None:
        """Directories of 1,000 and 1,001 entries list every entry exactly once: a full page, and one past it."""
        await _listings(backend, (PAGE, PAGE + 1), has_real_posix_shell)

    @rule(area='files', requires=['filesystem'], since='0.3.0', timeout=120, must='B39')
    async def test_listing_of_5000_entries_is_complete(
        self, backend: WorkspaceBackend, has_real_posix_shell: bool
    ) -> None:
        """A directory of 5,000 entries lists every entry exactly once: Azure's largest page, five of S3's."""
        await _listings(backend, (LARGEST_PAGE,), has_real_posix_shell)
