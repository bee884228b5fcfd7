"""Hypothesis strategies for workspace inputs: POSIX names and paths, byte payloads, argv items, env, shell text.

Composable and usable in any backend author's own tests, e.g. `@given(names())`. Every strategy draws only
values the contract must handle: names a POSIX filesystem accepts, text without NUL for argv and env.
"""

from __future__ import annotations

import posixpath

from hypothesis import strategies as st

__all__ = (
    'MAX_NAME_BYTES',
    'TRICKY_NAMES',
    'TRICKY_PAYLOADS',
    'argv_items',
    'env_names',
    'env_values',
    'names',
    'payloads',
    'relative_paths',
    'shell_words',
    'windows_name',
)

MAX_NAME_BYTES = 255
"""The longest file name, in UTF-8 bytes, that Linux filesystems accept."""

_TEXT = st.characters(codec='utf-8', exclude_characters='\x00')
"""Any character that can be encoded (no surrogates) and passed to a process (no NUL)."""

TRICKY_NAMES: tuple[str, ...] = (
    '-n',
    '--help',
    '.hidden',
    '..dots',
    'with space',
    'tab\there',
    'new\nline',
    "it's",
    '"quoted"',
    '$HOME',
    '*',
    '?',
    '[a]',
    'back\\slash',
    'caf\u00e9',  # NFC
    'cafe\u0301',  # NFD: a different name on a POSIX filesystem
    '\u65e5\u672c\u8a9e',
    '\U0001f600',
    ' leading',
    'trailing ',
    '~',
    '#hash',
    '&amp',
    ';',
    '|pipe',
    '>',
)
"""Names that broke real backends; property rules always try each of them, besides the generated ones."""


def _valid_name(name: str) -> bool:
    return name not in ('', '.', '..') and '/' not in name and len(name.encode()) <= MAX_NAME_BYTES


_WINDOWS_REFUSED = frozenset('<>:"/\\|?*') | frozenset(chr(code) for code in range(32))
_WINDOWS_DEVICES = frozenset(
    {'con', 'prn', 'aux', 'nul', *(f'com{n}' for n in range(10)), *(f'lpt{n}' for n in range(10))}
)


def windows_name(name: str) -> bool:
    """Whether Windows keeps `name` as written: no refused character, trailing dot or space, or device name.

    Refused are `<>:"/|?*`, the backslash and control characters; devices are `CON`, `NUL`, `COM1`, ...; a name is
    at most 255 UTF-16 code units.
    """
    stem = name.split('.')[0].rstrip(' ').casefold()
    return (
        _valid_name(name)
        and not set(name) & _WINDOWS_REFUSED
        and not name.endswith((' ', '.'))
        and stem not in _WINDOWS_DEVICES
        and len(name.encode('utf-16-le')) // 2 <= MAX_NAME_BYTES
    )


def names(platform: str = 'posix') -> st.SearchStrategy[str]:
    """POSIX file names, up to 255 UTF-8 bytes; never `/`, NUL, `.` or `..`; on `platform='windows'`, Windows names.

    Unicode (NFC and NFD spellings kept distinct), spaces, tabs, newlines, leading `-` and `.`, quotes, shell
    metacharacters and backslashes all appear (on Windows, those it keeps: see `windows_name`).
    """
    generated = st.text(_TEXT.filter(lambda c: c != '/'), min_size=1, max_size=40).filter(_valid_name)
    long = st.integers(min_value=200, max_value=MAX_NAME_BYTES).map(lambda n: 'n' * n)
    if platform == 'windows':
        tricky = [name for name in TRICKY_NAMES if windows_name(name)]
        return st.one_of(st.sampled_from(tricky), generated.filter(windows_name), long)
    return st.one_of(st.sampled_from(TRICKY_NAMES), generated, long)


def relative_paths(
    max_depth: int = 3, components: st.SearchStrategy[str] | None = None, platform: str = 'posix'
) -> st.SearchStrategy[str]:
    """Relative paths of 1 to `max_depth` components drawn from `components` (default: `names(platform)`)."""
    parts = components if components is not None else names(platform)
    return st.lists(parts, min_size=1, max_size=max_depth).map(lambda items: posixpath.join(*items))


TRICKY_PAYLOADS: tuple[bytes, ...] = (b'', b'\x00', b'\r\n', b'\r', b'\n\r\n', b'\xff\xfe', b'\xc3\x28', b'a\r\nb\rc\n')
"""Contents that broke real backends: empty, NUL, CR/LF mixes, invalid UTF-8."""


def payloads(max_size: int = 4096) -> st.SearchStrategy[bytes]:
    """File contents: empty, NUL, CR/LF mixes, invalid UTF-8, binary, up to `max_size` bytes."""
    return st.one_of(
        st.sampled_from(TRICKY_PAYLOADS),
        st.binary(max_size=max_size),
        st.text(max_size=max_size // 4).map(lambda text: text.encode('utf-8', 'surrogatepass')),
    )


def argv_items() -> st.SearchStrategy[str]:
    """One argv item: any text without NUL (spaces, quotes, `$()`, newlines, leading `-`, non-ASCII)."""
    return st.one_of(
        st.sampled_from(['', '-', '--', '-e', '$(id)', '`id`', '"', "'", '\\', '\n', ' ', '*', '%s', '%']),
        st.text(_TEXT, max_size=60),
    )


def env_names() -> st.SearchStrategy[str]:
    """Environment variable names in any case, with digits and underscores, prefixed so none replaces one in use.

    Lower and mixed case are as valid as upper (POSIX leaves names with lower-case letters to applications), and
    names differing only in case are different variables.
    """
    return st.tuples(
        st.sampled_from(['WC_', 'wc_', 'Wc_']), st.from_regex(r'[A-Za-z][A-Za-z0-9_]{0,20}', fullmatch=True)
    ).map(''.join)


def env_values() -> st.SearchStrategy[str]:
    """Environment values: any text without NUL (empty, `=`, newlines, quotes, non-ASCII)."""
    return st.one_of(st.sampled_from(['', '=', 'a=b', ' ', '\n', '$PATH', "'"]), st.text(_TEXT, max_size=60))


def shell_words() -> st.SearchStrategy[str]:
    """Text that a POSIX shell must treat as one literal word once single-quoted."""
    return st.text(_TEXT, min_size=1, max_size=30)
