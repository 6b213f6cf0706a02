"""Tables that never cut a figure, at any width: a terminal's, 80 columns of a cron mail,
or whatever COLUMNS says.

A ``FitTable`` is laid out when it is rendered, for the width it gets. Its figure columns
(numbers, waits, percentages, short codes) have the width of their widest cell and are never
wrapped or cut; its text columns (names, explanations) take what is left and wrap. When even
the figures alone do not fit, the table is printed one row per block instead, each figure
beside its column's name. ``first_fit`` tries several layouts of the same rows (a wide one,
a compact one) and takes the first that fits as a table.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from rich import box
from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

#: the narrowest a text column may be squeezed to before the layout gives up on a table
TEXT_MIN = 12


@dataclass(frozen=True)
class Col:
    """A column: ``figure`` (never cut or wrapped) or text (wraps), and its alignment."""

    name: str
    figure: bool = True
    justify: str = ""

    @property
    def align(self) -> str:
        return self.justify or ("right" if self.figure else "left")


@dataclass
class FitTable:
    title: str | None
    columns: list[Col]
    rows: list[list[str | Text]] = field(default_factory=list)
    styles: list[str | None] = field(default_factory=list)
    #: printed under the table whenever this layout is the one printed (what its marks mean)
    note: str = ""

    def add_row(self, *cells: str | Text, style: str | None = None) -> None:
        """A row of cells: strings, or Text for a styled one (never markup: a name from a
        trace or a cluster prints as it is)."""
        if len(cells) != len(self.columns):
            raise ValueError(f"{len(cells)} cells for {len(self.columns)} columns")
        self.rows.append([c if isinstance(c, Text) else Text(str(c)) for c in cells])
        self.styles.append(style)

    # -- layout ----------------------------------------------------------------------------
    def figure_width(self, k: int) -> int:
        """A figure column's width: its widest cell, or its header's longest word."""
        words = self.columns[k].name.split() or [""]
        return max([r[k].cell_len for r in self.rows] + [max(map(len, words))])

    def needs(self) -> int:
        """The narrowest width at which it prints as a table with every figure whole."""
        cols = self.columns
        widths = [self.figure_width(k) if c.figure else min(TEXT_MIN, self._text_width(k))
                  for k, c in enumerate(cols)]
        return sum(widths) + len(cols) - 1          # one space between columns

    def _text_width(self, k: int) -> int:
        return max([r[k].cell_len for r in self.rows] + [len(self.columns[k].name), 1])

    def fits(self, width: int) -> bool:
        return self.needs() <= width

    def table(self) -> Table:
        # no edges and no padding: the box's one-space separators are the only spaces
        # between columns, so the widths add up to ``needs``
        table = Table(title=self.title, title_justify="left", box=box.SIMPLE,
                      show_edge=False, pad_edge=False, padding=0)
        for k, c in enumerate(self.columns):
            if c.figure:   # as wide as its widest figure: only a longer header wraps
                table.add_column(c.name, justify=c.align, width=self.figure_width(k),
                                 overflow="fold")
            else:
                table.add_column(c.name, justify=c.align, overflow="fold")
        for row, style in zip(self.rows, self.styles):
            table.add_row(*row, style=style)
        return table

    def vertical(self, width: int) -> Group:
        """One block per row: its first text cell, then each other cell as 'name value',
        as many to a line as fit."""
        lead = next((k for k, c in enumerate(self.columns) if not c.figure), None)
        parts: list = [Text(self.title, style="italic")] if self.title else []
        for row, style in zip(self.rows, self.styles):
            if lead is not None:
                parts.append(Text(row[lead].plain, style=style or "bold"))
            pairs = [f"{c.name} {row[k].plain}" for k, c in enumerate(self.columns)
                     if k != lead and row[k].plain != ""]
            parts += [Text(line, style=style or "") for line in _pack(pairs, width, "  ")]
        return Group(*parts)

    # -- rich --------------------------------------------------------------------------------
    def render(self, width: int, as_table: bool) -> RenderResult:
        yield self.table() if as_table else self.vertical(width)
        if self.note:
            yield Text(self.note, style="dim")

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = options.max_width
        yield from self.render(width, self.fits(width))

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(min(self.needs(), options.max_width), options.max_width)


class FirstFit:
    """The first of several layouts that fits the width as a table, else the last one's
    rows one block each."""

    def __init__(self, *layouts: FitTable):
        self.layouts = layouts

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = options.max_width
        chosen = next((t for t in self.layouts if t.fits(width)), None)
        yield from (chosen or self.layouts[-1]).render(width, chosen is not None)


def _pack(items: list[str], width: int, indent: str) -> list[str]:
    """``items`` ('name figure') joined by '; ' into lines of at most ``width``; an item
    longer than a line goes on two, its name then its figure."""
    lines, line = [], ""
    for item in items:
        if len(indent + item) > width and " " in item:
            name, figure = item.rsplit(" ", 1)
            lines += [line] if line else []
            lines += [indent + name, indent * 2 + figure]
            line = ""
            continue
        candidate = f"{line}; {item}" if line else indent + item
        if line and len(candidate) > width:
            lines.append(line)
            candidate = indent + item
        line = candidate
    if line:
        lines.append(line)
    return lines
