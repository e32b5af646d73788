"""How commands print: rich tables and trees on a terminal, plain stable text when piped,
JSON for ``--json``.

Commands build their output from plain data (rows of strings, :class:`TreeNode`, JSON
values) and hand it to one of the ``emit_*`` functions here, which pick the rendering:
the plain forms are what scripts and tests read, so they never change with the terminal.

>>> emit_table(["name", "kind"], [["a", "array"], ["g", "group"]])
name  kind
a     array
g     group
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import click

from zarrkit.cli.app import is_terminal
from zarrkit.metadata.jsonio import dump_json

# The plain tree's branches: the same drawing as Group.tree().
_TEE, _ELBOW, _PIPE, _BLANK = "├── ", "└── ", "│   ", "    "


def _console() -> Any:
    from rich.console import Console

    # Bound at each call: click's test runner swaps sys.stdout for every invocation.
    return Console(file=sys.stdout, highlight=False)


def json_text(value: Any) -> str:
    """``value`` as JSON text, indented by 2, keys in the order given, strict JSON (numpy
    scalars and tuples are accepted; NaN and Infinity are not: spell them as zarr does,
    ``"NaN"``).

    >>> print(json_text({"shape": (2, 3), "n": 1}))
    {
      "shape": [
        2,
        3
      ],
      "n": 1
    }
    """
    return dump_json(value).decode("ascii")


def emit_json(value: Any) -> None:
    """Print ``value`` as JSON: coloured on a terminal, plain :func:`json_text` when piped.

    >>> emit_json({"a": [1]})
    {
      "a": [
        1
      ]
    }
    """
    text = json_text(value)
    if is_terminal():
        _console().print_json(text, indent=2)
    else:
        click.echo(text)


def emit_fields(rows: Sequence[tuple[str, str]], *, title: str | None = None) -> None:
    """Print ``(label, value)`` rows, one per line: ``label : value`` with the labels
    padded to one width (as ``Array.info`` prints), a two-column table on a terminal.

    >>> emit_fields([("Type", "Array"), ("Zarr format", "3")])
    Type        : Array
    Zarr format : 3
    """
    if is_terminal():
        from rich.table import Table
        from rich.text import Text

        table = Table(title=title, show_header=False, box=None, padding=(0, 1))
        table.add_column(style="bold cyan", no_wrap=True)
        table.add_column(overflow="fold")
        for label, value in rows:  # Text: brackets in values are not rich markup
            table.add_row(Text(label), Text(value))
        _console().print(table)
        return
    width = max((len(label) for label, _ in rows), default=0)
    if title is not None:
        click.echo(title)
    for label, value in rows:
        click.echo(f"{label:<{width}} : {value}")


def emit_table(columns: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    """Print a table: a rich table on a terminal; piped, a header line then one line per
    row, columns left-aligned and separated by two spaces (trailing spaces stripped).

    >>> emit_table(["n"], [])
    n
    """
    if is_terminal():
        from rich.table import Table
        from rich.text import Text

        table = Table(*columns, header_style="bold")
        for row in rows:
            table.add_row(*(Text(cell) for cell in row))
        _console().print(table)
        return
    widths = [max([len(column)] + [len(row[i]) for row in rows])
              for i, column in enumerate(columns)]
    for line in [list(columns), *rows]:
        cells = zip(line, widths, strict=True)
        click.echo("  ".join(f"{cell:<{width}}" for cell, width in cells).rstrip())


@dataclass
class TreeNode:
    """One line of a printed tree and the lines below it; ``style`` is the rich style of
    the label on a terminal (ignored when piped).

    >>> TreeNode("/", [TreeNode("x (2,) uint8")]).children[0].label
    'x (2,) uint8'
    """

    label: str
    children: list[TreeNode] = field(default_factory=list)
    style: str = ""


def tree_lines(root: TreeNode) -> list[str]:
    """The plain drawing of a tree, one string per node (as ``Group.tree()`` draws it).

    >>> print("\\n".join(tree_lines(TreeNode("/", [TreeNode("a", [TreeNode("x")]),
    ...                                            TreeNode("b")]))))
    /
    ├── a
    │   └── x
    └── b
    """
    lines = [root.label]

    def walk(node: TreeNode, indent: str) -> None:
        for i, child in enumerate(node.children):
            last = i == len(node.children) - 1
            lines.append(f"{indent}{_ELBOW if last else _TEE}{child.label}")
            walk(child, indent + (_BLANK if last else _PIPE))

    walk(root, "")
    return lines


def emit_tree(root: TreeNode) -> None:
    """Print a tree: a rich tree on a terminal, :func:`tree_lines` when piped.

    >>> emit_tree(TreeNode("/", [TreeNode("x")]))
    /
    └── x
    """
    if not is_terminal():
        click.echo("\n".join(tree_lines(root)))
        return
    from rich.text import Text
    from rich.tree import Tree

    def build(node: TreeNode, into: Tree) -> None:
        for child in node.children:
            build(child, into.add(Text(child.label, style=child.style)))

    tree = Tree(Text(root.label, style=root.style))
    build(root, tree)
    _console().print(tree)
