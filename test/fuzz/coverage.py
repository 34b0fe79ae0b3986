#!/usr/bin/env python3
"""What of the language the random program generator (generate.py) uses.

  coverage.py [COUNT]     generates COUNT programs (default 300, seeds 1..)
                          and checks that together they use every builtin
                          of passes/builtins/Builtins.def and Ops.def and
                          every form of the syntax listed below; prints the
                          constructs and how many programs use each, and
                          exits 1 naming what none of them used.

The builtins are read from the compiler's own tables, so a builtin added
there and not to the generator fails this check (ctest fuzz_coverage).
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import generate  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")

# The syntax of docs/language.md, each form as a pattern over program text.
SYNTAX = {
    "data record": r"data \w+ = \{",
    "data union": r"data \w+ = \w+ \{[^;]*\|",
    "recursive data": r"data Tree = .*Tree",
    "optional type": r"\w\?",
    "const": r"^const ",
    "import": r'^import "',
    "layer": r"^layer ",
    "param": r"^param ",
    "def (inlined)": r"^def \w+\([a-z]+: f32",
    "def (recursive)": r"^def (\w+)\(.*\n(.*\n)*?.*\b\1\(",
    "model": r"^model ",
    "let": r"\blet \w+ =",
    "let (destructuring)": r"\blet \(",
    "lambda": r"\|\w+(, \w+)*\|",
    "if": r"\bif ",
    "match (union)": r"match [^{]*\{ [A-Z]\w* \w+ =>",
    "match (wildcard)": r"\b_ =>",
    "match (optional)": r"Some \w+ =>",
    "tuple": r"\(\w[^()]*, ",
    "matrix product": r" @ ",
    "tuple field": r"\)\.\d",
    "index": r"\[\d+\]",
    "slice": r"\[\d+:\d+\]",
    "subscripts": r"\[:, \d+\]",
    "named argument": r"\b(axis|act): ",
    "list literal": r"\[\d+(, \d+)*\]",
    "&&": r"&&",
    "||": r"\|\|",
    "!": r"![a-z(]",
    "comparison": r" (==|!=|<=|>=|<|>) ",
    "loss": r"^\s*loss ",
    "metric": r"^\s*metric ",
    "output": r"^\s*output ",
    "output (tuple)": r"^\s*output \(",
}


def builtins():
    """(kind, name) of every builtin in the compiler's tables."""
    found = []
    tables = [("passes/builtins/Builtins.def", r"^FOLDC_(FUNCTION|COMBINATOR|LAYER|INITIALIZER|ACTIVATION)\(\w+, \"(\w+)\""),
              ("passes/builtins/Ops.def", r"^FOLDC_(ELEMENTWISE)\(\w+, \"(\w+)\"")]
    for path, pattern in tables:
        with open(os.path.join(ROOT, path)) as table:
            for line in table:
                match = re.match(pattern, line)
                if match:
                    found.append((match.group(1).lower(), match.group(2)))
    return found


def builtin_pattern(kind, name):
    if kind == "layer":
        return rf"^layer \w+ = {name}\("
    if kind == "initializer":
        return rf"^param \w+: .*= {name}\b|init: {name}\("
    if kind == "activation":
        return rf"act: {name}\b"
    return rf"\b{name}\("


def main():
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    programs = [generate.Program(generate.random.Random(seed)).source(seed) for seed in range(1, count + 1)]
    constructs = [(f"{kind} {name}", builtin_pattern(kind, name)) for kind, name in builtins()]
    constructs += list(SYNTAX.items())
    missing = []
    for label, pattern in constructs:
        regex = re.compile(pattern, re.MULTILINE)
        uses = sum(1 for program in programs if regex.search(program))
        print(f"{uses:6d}  {label}")
        if uses == 0:
            missing.append(label)
    if missing:
        print(f"coverage: {len(missing)} constructs in no program of {count}: {', '.join(missing)}")
        return 1
    print(f"coverage: all {len(constructs)} constructs used in {count} programs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
