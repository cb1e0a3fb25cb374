"""Transaction-file lines read strictly (design.md "Refusals are strict").

A line is at most `MAX_LINE_BYTES` bytes of UTF-8 holding one JSON object in which no object
repeats a key; the file reader never holds more than that of an over-long line. Numbers with a
fraction or exponent parse to exact `Decimal`s (so a fraction is never taken for an integer);
`NaN` and `Infinity` are not JSON and are refused. Lines take orjson's fast parse when it is
provably the same; the standard library's parser, with a hook that sees every key, otherwise.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import IO, Any

import orjson

from ledger.domain.errors import InputError

MAX_LINE_BYTES = 1 << 20  # 1 MiB: a real line is a few hundred bytes, a 1,000-way split 10 KB
MAX_KEYS = 100  # keys in one JSON object: the largest command, `generate`, has 29 fields
BOM = b"\xef\xbb\xbf"
_CHUNK = 1 << 16
_EXPONENT = re.compile(rb"[0-9][eE]")


@dataclass(frozen=True)
class RefusedLine:
    """A line the reader refused before parsing (too long): applying it stores nothing."""

    error: InputError


def too_long(size: int) -> InputError:
    return InputError(f"line of {size:,} bytes is over the limit of {MAX_LINE_BYTES:,} bytes")


def file_lines(stream: IO[bytes]) -> Iterator[bytes | RefusedLine]:
    """Every line of a binary stream (blank ones too, so numbering holds), reading at most
    `MAX_LINE_BYTES` + 1 bytes at a time; a UTF-8 BOM at the start of the file is skipped."""
    first = True
    while raw := stream.readline(MAX_LINE_BYTES + 1):
        if first and raw.startswith(BOM):
            raw = raw[len(BOM):]
        first = False
        if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
            size = len(raw)
            while raw and not raw.endswith(b"\n"):  # skip the rest of it, a chunk at a time
                raw = stream.readline(_CHUNK)
                size += len(raw)
            yield RefusedLine(too_long(size - raw.endswith(b"\n")))
        else:
            yield raw


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object's keys, refusing one given twice (JSON parsers otherwise keep the last), and
    more keys than any command has fields (so no flood of unknown keys is validated)."""
    if len(pairs) > MAX_KEYS:
        raise InputError(f"an object of {len(pairs):,} keys is over the limit of {MAX_KEYS}")
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise InputError(f"duplicated key {key[:40]!r}", key[:40])
            seen.add(key)
    return result


def _not_json(name: str) -> None:
    raise InputError(f"not valid JSON ({name} is not a JSON number)")


def decoded(raw: bytes) -> str:
    """A line's UTF-8 text; a BOM here (not at the start of a file) or a bad byte is named."""
    if raw.startswith(BOM):
        raise InputError("a UTF-8 byte-order mark is allowed only at the start of a file")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = raw[exc.start:exc.start + 1].hex()
        raise InputError(f"not UTF-8: invalid byte 0x{bad} at byte {exc.start + 1}") from None


def _has_float(value: Any) -> bool:
    if isinstance(value, dict):
        return any(_has_float(item) for item in value.values())
    if isinstance(value, list):
        return any(_has_float(item) for item in value)
    return isinstance(value, float)


def _fast(raw: bytes) -> Any:
    """orjson's parse when it is certainly the strict one, else None (the exact parse decides).

    Certain when the result has no float (orjson's floats are binary; a float's text has a
    point or an exponent), the text no escape, and as many colons as orjson's rendering of the
    result (a dropped duplicate key would take its colon with it), at most `MAX_KEYS`."""
    colons = raw.count(b":")
    if colons > MAX_KEYS or b"\\" in raw:
        return None
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    if (b"." in raw or _EXPONENT.search(raw)) and _has_float(value):
        return None
    return value if orjson.dumps(value).count(b":") == colons else None


def parse_line(raw: str | bytes) -> Any:
    """The JSON value of one line; `InputError` says what is wrong and where."""
    if len(raw) > MAX_LINE_BYTES:
        raise too_long(len(raw))
    value = _fast(raw) if isinstance(raw, bytes) else None
    if value is not None:
        return value
    text = raw if isinstance(raw, str) else decoded(raw)
    try:
        return json.loads(text, object_pairs_hook=_unique_keys, parse_float=Decimal,
                          parse_constant=_not_json)
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON ({exc.msg} at column {exc.colno})") from None
    except RecursionError:
        raise InputError("not valid JSON (nested too deeply)") from None
    except ValueError as exc:  # an integer of more digits than Python converts
        raise InputError(f"not valid JSON ({str(exc)[:80]})") from None
