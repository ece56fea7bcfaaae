"""The consoles every command prints through: rich, except that output that is not a terminal (a file,
a pipe, CI logs) is never wrapped at rich's default of 80 columns, which splits paths and breaks tables."""

from __future__ import annotations

from rich.console import Console, ConsoleDimensions

NO_WRAP_WIDTH = 10_000  # wide enough for any path or table row; rich sizes tables to their content


class ForgeConsole(Console):
    """A rich Console whose width is the terminal's on a terminal and effectively unbounded elsewhere,
    whatever COLUMNS says (it describes a terminal; CI runners and pytest-xdist export COLUMNS=80)."""

    def __init__(self, *args, width: int | None = None, **kwargs) -> None:
        super().__init__(*args, width=width, **kwargs)
        self._asked_width = width is not None

    @property
    def size(self) -> ConsoleDimensions:
        real = super().size
        if not self._asked_width and not self.is_terminal:
            return ConsoleDimensions(NO_WRAP_WIDTH, real.height)
        return real

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        Console.size.fset(self, new_size)  # type: ignore[attr-defined]


def make_console(*, stderr: bool = False) -> ForgeConsole:
    return ForgeConsole(stderr=stderr)
