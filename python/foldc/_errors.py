"""foldc.CompileError: a model that foldc or the C++ compiler refused, with
its diagnostics as text (clang-style: FILE:LINE:COL, the line, the caret)
and as data."""
import dataclasses
import re

_LOCATED = re.compile(r"^(?P<file>[^:\n]+):(?P<line>\d+):(?P<column>\d+): "
                      r"(?P<severity>error|warning|note): (?P<message>.*)$")


@dataclasses.dataclass(frozen=True)
class Diagnostic:
    """One located diagnostic of foldc."""
    file: str
    line: int
    column: int
    severity: str  # "error", "warning" or "note"
    message: str


def parse_diagnostics(text):
    """The located diagnostics of `text`, in order (the source lines and
    carets between them are left out)."""
    found = []
    for line in text.splitlines():
        match = _LOCATED.match(line)
        if match:
            found.append(Diagnostic(match["file"], int(match["line"]), int(match["column"]),
                                    match["severity"], match["message"]))
    return found


class CompileError(Exception):
    """A model foldc (or the C++ compiler after it) could not compile. str()
    is the compiler's own text; `diagnostics` holds its located errors,
    warnings and notes as data."""

    def __init__(self, text):
        super().__init__(text)
        self.text = text
        self.diagnostics = parse_diagnostics(text)

    def __str__(self):
        return self.text

    def _repr_pretty_(self, printer, cycle):  # IPython shows the diagnostics as they are
        printer.text(self.text)


class CacheError(Exception):
    """The compile cache cannot be used (a folder that cannot be written)."""
