"""The paragraphs of the five seed sections (§§80.1425-80.1429), parsed from docs/regulation/.

The plain-text excerpts keep each paragraph's label at the start of its line but lost some
lines: a heading whose text was flattened away (`(f)` standing for `(f)(1)(i)`), or the italic
`(1)`, `(2)` … of a fifth level (printed as a bare `(`). The CFR numbers every level without
gaps, so a skipped label is inferred and marked `inferred` (the paragraph exists; its text is
lost in the excerpt). Levels: (a) letter, (1) number, (i) roman, (A) capital, (1) italic number.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEXTS = ROOT / "docs" / "regulation"
SECTIONS = ("80.1425", "80.1426", "80.1427", "80.1428", "80.1429")

_LABEL = re.compile(r"\(([a-z]{1,5}|[0-9]{1,2}|[A-Z])\)")
_ROMAN = {
    numeral: n
    for n, numeral in enumerate(
        ("i", "ii", "iii", "iv", "v", "vi", "vii", "viii", "ix", "x",
         "xi", "xii", "xiii", "xiv", "xv", "xvi", "xvii", "xviii", "xix", "xx"),
        start=1,
    )
}
_ROMAN_TEXT = {n: r for r, n in _ROMAN.items()}


@dataclass(frozen=True)
class Paragraph:
    """One paragraph: its citation (`§80.1428(a)(4)`), its text in the excerpt, whether inferred."""

    id: str
    text: str
    inferred: bool = False


def _spell(level: int, ordinal: int) -> str:
    """The label of the `ordinal`-th paragraph at `level` (1 letter … 5 italic number)."""
    if level == 1:
        return chr(ord("a") + ordinal - 1)
    if level == 3:
        return _ROMAN_TEXT[ordinal]
    if level == 4:
        return chr(ord("A") + ordinal - 1)
    return str(ordinal)


def _readings(label: str) -> list[tuple[int, int]]:
    """Each (level, ordinal) a label may be: `(i)` is a letter or a roman numeral, `(1)` a
    number at level 2 or 5."""
    if label.isdigit():
        return [(2, int(label)), (5, int(label))]
    if label.isupper():
        return [(4, ord(label) - ord("A") + 1)]
    out = []
    if len(label) == 1:
        out.append((1, ord(label) - ord("a") + 1))
    if label in _ROMAN:
        out.append((3, _ROMAN[label]))
    return out


class _Parser:
    """Walks the labels in order, keeping the open paragraph at each level."""

    def __init__(self, section: str) -> None:
        self.section = section
        self.stack: list[tuple[int, int, str]] = []  # (level, ordinal, label)
        self.found: dict[str, Paragraph] = {}

    def cite(self) -> str:
        return f"§{self.section}" + "".join(f"({label})" for _, _, label in self.stack)

    def _cost(self, level: int, ordinal: int) -> int | None:
        """How many paragraphs reading a label this way infers (None: impossible)."""
        depth = len(self.stack)
        open_levels = {lvl: ordn for lvl, ordn, _ in self.stack}
        if level in open_levels:  # a later sibling of an open paragraph
            previous = open_levels[level]
            return ordinal - previous - 1 if ordinal > previous else None
        deepest = self.stack[-1][0] if self.stack else 0
        if level <= deepest:
            return None
        return (level - deepest - 1) + (ordinal - 1) if depth or level == 1 else None

    def label(self, label: str, text: str) -> None:
        costs = [
            (cost, level, ordinal)
            for level, ordinal in _readings(label)
            if (cost := self._cost(level, ordinal)) is not None
        ]
        if not costs:
            raise ValueError(f"§{self.section}: cannot place ({label}) after {self.cite()}")
        _, level, ordinal = min(costs, key=lambda c: (c[0], -c[1]))  # a tie: the deeper
        self.place(level, ordinal, text)

    def place(self, level: int, ordinal: int, text: str) -> None:
        while self.stack and self.stack[-1][0] >= level:
            if self.stack[-1][0] == level:
                first = self.stack[-1][1] + 1
                self.stack.pop()
                break
            self.stack.pop()
        else:
            deepest = self.stack[-1][0] if self.stack else 0
            for missing in range(deepest + 1, level):  # a heading lost in the excerpt
                self.stack.append((missing, 1, _spell(missing, 1)))
                self.add("", inferred=True)
            first = 1
        for gap in range(first, ordinal):  # earlier siblings lost in the excerpt
            self.stack.append((level, gap, _spell(level, gap)))
            self.add("", inferred=True)
            self.stack.pop()
        self.stack.append((level, ordinal, _spell(level, ordinal)))
        self.add(text)

    def italic(self, text: str) -> None:
        """A bare `(`: the next italic number under the open capital-letter paragraph."""
        if self.stack and self.stack[-1][0] == 5:
            self.place(5, self.stack[-1][1] + 1, text)
        else:
            self.place(5, 1, text)

    def add(self, text: str, inferred: bool = False) -> None:
        cite = self.cite()
        if cite in self.found and not inferred:
            raise ValueError(f"{cite} appears twice")
        self.found[cite] = Paragraph(cite, text.strip(), inferred)


def _lines(text: str) -> list[str]:
    """Non-blank lines, with a flattened `(` / `i` / `A) text` rejoined as `(A) text`."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if (
            line == "(" and i + 2 < len(lines) and lines[i + 1] in _ROMAN
            and re.match(r"[A-Z]\) ", lines[i + 2])
        ):
            out.append("(" + lines[i + 2])
            i += 3
            continue
        out.append(line)
        i += 1
    return out


def parse(section: str, text: str) -> list[Paragraph]:
    """Every paragraph of one section, in order, labels inferred where the excerpt lost them."""
    parser = _Parser(section)
    started = False
    for line in _lines(text):
        if line == "(":
            parser.italic("")
            continue
        rest, labels = line, []
        while (match := _LABEL.match(rest)) is not None:
            labels.append(match.group(1))
            rest = rest[match.end():].lstrip()
        if not labels:
            continue
        if not started and labels[0] != "a":
            continue  # text before paragraph (a): headings, cross references
        started = True
        for n, label in enumerate(labels):
            parser.label(label, rest if n == len(labels) - 1 else "")
    return list(parser.found.values())


def paragraphs(folder: Path = TEXTS) -> list[Paragraph]:
    """The paragraphs of all five seed sections, in section order; each section's introductory
    text is the paragraph named by the section alone (`§80.1425`)."""
    out: list[Paragraph] = []
    for section in SECTIONS:
        text = (folder / f"s{section}.txt").read_text(encoding="utf-8")
        intro = text.split("(a)", 1)[0].strip()
        out.append(Paragraph(f"§{section}", intro))
        out.extend(parse(section, text))
    return out


if __name__ == "__main__":
    for p in paragraphs():
        print(p.id, "(inferred)" if p.inferred else "", p.text[:70])
