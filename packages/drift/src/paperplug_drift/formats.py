"""Tool results as fields: a result is parsed into its string fields (`Document.fields`) and
rendered back in its own format and type once some fields were masked, so the isolator cuts
an injected instruction out of the one field that holds it and keeps every other field.

Formats: Python objects (dicts, lists, tuples: string values, keys kept), JSON text (object or
array; indentation, separators and ASCII escaping kept), a Python literal's text (`str` of a
dict, as AgentDojo passes a dict result), YAML text (a mapping or a sequence; AgentDojo's
list results), CSV/TSV and Markdown tables (cells), HTML (text, comments and the readable
attributes; tags kept; hidden or machine-marked regions one field), anything else one field.
"""

from __future__ import annotations

import ast
import csv
import html
import io
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml


class _Loader(yaml.SafeLoader):
    """YAML 1.2's core types: `12:30` and `no` stay strings (YAML 1.1 reads 750 and False)."""


_Loader.yaml_implicit_resolvers = {
    key: [(tag, rx) for tag, rx in resolvers if not tag.endswith((":bool", ":int", ":float"))]
    for key, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:int", re.compile(r"^[-+]?[0-9]+$"), list("-+0123456789")
)
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^(?:[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"),
    list("-+0123456789."),
)  # fmt: skip

HTML_TAGS = (
    "html|head|body|title|meta|link|script|style|div|span|p|a|b|i|u|em|strong|small|br|hr|img|"
    "ul|ol|li|dl|dt|dd|table|thead|tbody|tfoot|tr|td|th|caption|h[1-6]|section|article|header|"
    "footer|nav|main|aside|figure|figcaption|blockquote|pre|code|form|input|button|label|"
    "select|option|textarea|iframe|sup|sub|center|font|noscript|abbr|cite|q|s|del|ins|mark"
)
HTML_TOKEN = re.compile(
    rf"<!--.*?-->|<!doctype[^>]*>|</?(?:{HTML_TAGS})\b(?:\s[^<>]*)?/?>", re.I | re.S
)
HTML_ATTRIBUTE = re.compile(
    r"""(\b(?:alt|title|aria-label|placeholder|content|value)\s*=\s*)(["'])(.*?)\2""", re.I | re.S
)
HTML_HIDDEN = re.compile(
    r"<!--\s*(?P<mark>[a-z][\w-]*)\s*-->.*?<!--\s*/(?P=mark)\s*-->"
    r"|<(?P<tag>[a-z][a-z0-9]*)\b[^<>]*style\s*=\s*[\"'][^\"']*(?:display\s*:\s*none|"
    r"visibility\s*:\s*hidden|font-size\s*:\s*[01](?:px|pt)|opacity\s*:\s*0(?:[;\"']|$)|"
    r"color\s*:\s*(?:#fff\b|#ffffff|white))[^<>]*>.*?</(?P=tag)\s*>",
    re.I | re.S,
)
HTML_HINT = re.compile(rf"<(?:!doctype|(?:{HTML_TAGS})\b[^<>]*>)", re.I)
YAML_KEY = re.compile(r"^[\w .$@/()-]{1,60}$")


@dataclass
class Document:
    """A tool result's string `fields` (in reading order), its `format`, and how to put it
    back together: `render(fields)` returns the result in its own format and type."""

    format: str
    fields: list[str]
    renderer: Callable[[list[str]], Any]
    original: Any = None

    def render(self, fields: Sequence[str]) -> Any:
        """The result with `fields` in place of its own (itself when they are the same)."""
        if len(fields) != len(self.fields):
            raise ValueError(f"fields must hold {len(self.fields)} strings, got {len(fields)}")
        if list(fields) == self.fields:
            return self.original
        return self.renderer(list(fields))

    @property
    def text(self) -> str:
        """The fields one after another, for a detector that reads the whole result."""
        return "\n\n".join(self.fields)


# ------------------------------------------------------------------- objects, JSON, YAML


def _strings(value: Any, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, Mapping):
        for item in value.values():
            _strings(item, out)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _strings(item, out)


def _rebuild(value: Any, fields: Any) -> Any:
    if isinstance(value, str):
        return next(fields)
    if isinstance(value, Mapping):
        items = [(k, _rebuild(v, fields)) for k, v in value.items()]
        try:
            return type(value)(items)
        except TypeError:  # a mapping type that cannot be built from items
            return dict(items)
    if isinstance(value, (list, tuple)):
        items = [_rebuild(v, fields) for v in value]
        try:
            return type(value)(items)
        except TypeError:  # a named tuple
            return type(value)(*items)
    return value


def _object(value: Any, fmt: str, dump: Callable[[Any], Any]) -> Document:
    fields: list[str] = []
    _strings(value, fields)
    return Document(fmt, fields, lambda new: dump(_rebuild(value, iter(new))))


def _json(text: str, value: Any) -> Document:
    body = text.strip()
    indent: int | None = None
    if "\n" in body:
        first = re.search(r"\n([ \t]+)\S", body)
        indent = len(first.group(1)) if first else 0
    compact = indent is None and ", " not in body and ": " not in body
    separators = (",", ":") if compact else None
    tail = text[len(text.rstrip()) :]

    def dump(new: Any) -> str:
        out = json.dumps(new, indent=indent, ensure_ascii=text.isascii(), separators=separators)
        return out + tail

    return _object(value, "json", dump)


def _yaml(text: str, value: Any) -> Document:
    def dump(new: Any) -> str:
        out = yaml.safe_dump(new, sort_keys=False, allow_unicode=not text.isascii())
        return out if text.endswith("\n") else out.rstrip("\n")

    return _object(value, "yaml", dump)


def _looks_like_yaml(value: Any) -> bool:
    """A mapping of key-like keys (two or more, or nested) or a sequence: not prose that
    happens to hold a colon ("Amount due: 98.70")."""
    if isinstance(value, list):
        return bool(value)
    if not isinstance(value, dict) or not value:
        return False
    if not all(isinstance(k, str) and YAML_KEY.match(k) and ". " not in k for k in value):
        return False
    return len(value) >= 2 or any(isinstance(v, (dict, list)) for v in value.values())


# ------------------------------------------------------------------- tables, CSV


def _markdown_table(text: str) -> Document | None:
    """Cells of a Markdown table; a row whose cells do not match the header's count (a "|"
    inside a cell) is one field."""
    lines = text.split("\n")
    rule = re.compile(r"\s*\|[\s:|-]+\|?\s*")
    rows = [i for i, line in enumerate(lines) if line.strip().startswith("|")]
    if len(rows) < 2 or not any(rule.fullmatch(lines[i]) for i in rows):
        return None
    width = len(lines[rows[0]].strip().strip("|").split("|"))
    cells: list[tuple[int, bool]] = []  # (line, whole row) of each field
    fields: list[str] = []
    for i in rows:
        if rule.fullmatch(lines[i]):
            continue
        inner = lines[i].strip().strip("|")
        parts = inner.split("|")
        whole = len(parts) != width
        for cell in [inner] if whole else parts:
            cells.append((i, whole))
            fields.append(cell.strip())

    def render(new: list[str]) -> str:
        out = list(lines)
        changed = {i for (i, _), old, now in zip(cells, fields, new, strict=True) if old != now}
        for i in changed:
            row = [now for (r, _), now in zip(cells, new, strict=True) if r == i]
            out[i] = "| " + " | ".join(row) + " |"
        return "\n".join(out)

    return Document("table", fields, render)


def _csv(text: str) -> Document | None:
    """Cells of CSV or TSV text: two rows or more, no blank line, two cells or more a row,
    all as wide, short cells (median at most 60 characters), and no space after half the
    commas or more (that is prose)."""
    lines = text.strip().splitlines()
    if len(lines) < 2 or not all(line.strip() for line in lines):  # a blank line: prose
        return None
    for delimiter in ("\t", ",", ";", "|"):
        if delimiter not in lines[0]:
            continue
        try:
            rows = [r for r in csv.reader(io.StringIO(text), delimiter=delimiter) if r]
        except csv.Error:
            continue
        if len(rows[0]) >= 2 and len(rows) >= 2 and all(len(r) == len(rows[0]) for r in rows):
            cells = sorted(len(c) for r in rows for c in r)
            spaced = text.count(delimiter + " ") >= text.count(delimiter) / 2
            if cells[len(cells) // 2] <= 60 and not (spaced and delimiter != "\t"):
                return _csv_document(text, rows, delimiter)
    return None


def _csv_document(text: str, rows: list[list[str]], delimiter: str) -> Document:
    ending = "\r\n" if "\r\n" in text else "\n"
    tail = ending if text.endswith(("\n", "\r")) else ""

    def render(new: list[str]) -> str:
        out = io.StringIO()
        cells = iter(new)
        writer = csv.writer(out, delimiter=delimiter, lineterminator=ending)
        writer.writerows([[next(cells) for _ in row] for row in rows])
        return out.getvalue().rstrip("\r\n") + tail

    fields = [cell for row in rows for cell in row]
    return Document("tsv" if delimiter == "\t" else "csv", fields, render)


# ------------------------------------------------------------------- HTML


def _html(text: str) -> Document:
    """Fields: the text between tags (entities resolved), the inside of comments, and the
    readable attributes (alt, title, ...). Tags that are not HTML (`<INFORMATION>`) are text.
    What a page hides or marks off for machines (an element styled invisible, text between
    `<!--X-->` and `<!--/X-->`) is one field with its markup, so a detector sees the marks."""
    pieces: list[tuple[str, str]] = []  # (kind, raw): "text", "comment", "tag", "raw"
    at = 0
    hidden = [m.span() for m in HTML_HIDDEN.finditer(text)]
    for match in HTML_TOKEN.finditer(text):
        if match.start() < at:
            continue
        region = next(((a, b) for a, b in hidden if a == match.start()), None)
        if match.start() > at:
            pieces.append(("text", text[at : match.start()]))
        if region:
            pieces.append(("raw", text[region[0] : region[1]]))
            at = region[1]
            continue
        token = match.group()
        pieces.append(("comment" if token.startswith("<!--") else "tag", token))
        at = match.end()
    if at < len(text):
        pieces.append(("text", text[at:]))
    fields: list[str] = []
    slots: list[tuple[int, int]] = []  # (piece, attribute index or -1)
    for k, (kind, raw) in enumerate(pieces):
        if kind in ("text", "raw"):
            slots.append((k, -1))
            fields.append(html.unescape(raw) if kind == "text" else raw)
        elif kind == "comment":
            slots.append((k, -1))
            fields.append(raw[4:-3])
        else:
            for j, attribute in enumerate(HTML_ATTRIBUTE.finditer(raw)):
                slots.append((k, j))
                fields.append(html.unescape(attribute.group(3)))

    def render(new: list[str]) -> str:
        out = [raw for _, raw in pieces]
        for (k, j), old, now in zip(slots, fields, new, strict=True):
            if old == now:
                continue
            kind = pieces[k][0]
            if kind == "text":
                out[k] = html.escape(now, quote=False)
            elif kind == "raw":
                out[k] = now
            elif kind == "comment":
                out[k] = f"<!--{now}-->"
            else:
                matches = list(HTML_ATTRIBUTE.finditer(out[k]))
                m = matches[j]
                value = html.escape(now, quote=True)
                out[k] = out[k][: m.start(3)] + value + out[k][m.end(3) :]
        return "".join(out)

    return Document("html", fields, render)


# ------------------------------------------------------------------- dispatch


def _text(text: str) -> Document:
    return Document("text", [text], lambda new: new[0])


def parse_result(result: Any) -> Document:
    """The fields of a tool result: a str (JSON, YAML, a table, CSV, HTML or text), a dict, a
    list or a tuple (nested). Other values (numbers, None) have no fields. Raises TypeError
    for anything else."""
    document = _parse(result)
    document.original = result
    return document


def _parse(result: Any) -> Document:
    if isinstance(result, (Mapping, list, tuple)):
        return _object(result, "object", lambda new: new)
    if result is None or isinstance(result, (bool, int, float)):
        return Document("scalar", [], lambda new: result)
    if not isinstance(result, str):
        raise TypeError(
            "result must be a str, a mapping, a list, a tuple or a number, got "
            f"{type(result).__name__}"
        )
    body = result.strip()
    if body[:1] in "{[":
        try:
            value = json.loads(body)
        except ValueError:
            value = None
        if isinstance(value, (dict, list)):
            return _json(result, value)
        try:  # a Python literal: str() of a dict, as AgentDojo gives a tool's dict result
            value = ast.literal_eval(body)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            value = None
        if isinstance(value, (dict, list)) and str(value) == body:
            return _object(value, "python", lambda new: result.replace(body, str(new), 1))
    if HTML_HINT.search(result):
        return _html(result)
    table = _markdown_table(result) or _csv(result)
    if table is not None:
        return table
    if ":" in body or body.startswith("- "):
        try:
            value = yaml.load(result, Loader=_Loader)
        except yaml.YAMLError:
            value = None
        if _looks_like_yaml(value):
            return _yaml(result, value)
    return _text(result)
