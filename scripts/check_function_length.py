#!/usr/bin/env python3
"""Checks that no function of the given folders is longer than a limit.

A function is a definition whose body opens at the end of its signature's
last line (`...) {`, `...) const {`, `...) -> T {`, clang-format's layout);
its length counts the lines from that line to its closing brace. Braces
inside string and character literals and comments are not counted. Prints
each longer function as FILE:LINE: NAME: N lines, and exits 1 when any.

Usage: check_function_length.py [--max N] [ROOT] FOLDER...
       (default: --max 80, ROOT this checkout)
"""
import argparse
import os
import re
import sys

OPENS_BODY = re.compile(r"\)\s*(const\s*)?(noexcept\s*)?(override\s*)?(->\s*[^{;]+)?\{\s*$")
CONTROL = re.compile(r"^\s*(\}\s*)?(if|for|while|switch|catch|else|do|return)\b")
LITERALS = re.compile(r'"(\\.|[^"\\])*"|\'(\\.|[^\'\\])*\'')


def code_of(line):
    """The line without its literals and // comment."""
    return LITERALS.sub('""', line).split("//")[0]


def function_name(lines, body):
    """The name of the function whose body opens on line `body`: before the
    first '(' of its signature's first line (signatures may span lines)."""
    first = body
    while first > 0 and lines[first - 1].rstrip().endswith((",", "(")):
        first -= 1
    words = lines[first].split("(")[0].split()
    return words[-1] if words else "?"


def long_functions(path, limit):
    with open(path, encoding="utf-8") as source:
        lines = [code_of(l) for l in source.read().split("\n")]
    for start, line in enumerate(lines):
        if not OPENS_BODY.search(line) or CONTROL.match(line) or "[" in line.split("(")[0]:
            continue
        depth, end = 0, start
        while end < len(lines):
            depth += lines[end].count("{") - lines[end].count("}")
            if depth <= 0:
                break
            end += 1
        length = end - start + 1
        if length > limit:
            yield start + 1, function_name(lines, start), length


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--max", type=int, default=80)
    parser.add_argument("paths", nargs="+")
    args = parser.parse_args()
    root, folders = (args.paths[0], args.paths[1:]) if len(args.paths) > 1 else (
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))), args.paths)
    found = 0
    for folder in folders:
        for directory, _, files in os.walk(os.path.join(root, folder)):
            for file in sorted(files):
                if not file.endswith((".h", ".cpp")):
                    continue
                path = os.path.join(directory, file)
                for line, name, length in long_functions(path, args.max):
                    print(f"{os.path.relpath(path, root)}:{line}: {name}: {length} lines")
                    found += 1
    print(f"function length: {found} function(s) over {args.max} lines")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
