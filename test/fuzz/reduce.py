#!/usr/bin/env python3
"""Reduces a failing generated program to what still fails the same way.

  reduce.py DIR WHY [--max-tries N] -- VERDICT...

DIR holds prog.fold and prog.jsonl; WHY is the line the failure printed.
`VERDICT... CANDIDATE_DIR` must print why CANDIDATE_DIR's program fails (and
exit non-zero) or exit 0 when it passes. Greedily, while the verdict on a
candidate is still WHY, this deletes lines of the program (declarations,
statements, outputs), replaces subexpressions by one of their operands or
arguments, and deletes lines of data (keeping one). The smallest failing
program is written to DIR/reduced.fold and DIR/reduced.jsonl.
"""
import glob
import os
import shutil
import subprocess
import sys

OPERATORS = (" + ", " - ", " * ", " / ", " == ", " < ", " > ", ", ")


def split_top_level(text, separators):
    """Splits TEXT at SEPARATORS that are outside every bracket."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(text):
        c = text[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif depth == 0:
            sep = next((s for s in separators if text.startswith(s, i)), None)
            if sep:
                parts.append(text[start:i])
                i += len(sep)
                start = i
                continue
        i += 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def bracket_spans(line):
    """(start, end) of every balanced (...) of LINE, widened to a call's name."""
    spans, stack = [], []
    for i, c in enumerate(line):
        if c == "(":
            stack.append(i)
        elif c == ")" and stack:
            open_at = stack.pop()
            start = open_at
            while start > 0 and (line[start - 1].isalnum() or line[start - 1] == "_"):
                start -= 1
            spans.append((start, open_at, i + 1))
    return spans


def subexpression_candidates(source):
    lines = source.split("\n")
    for n, line in enumerate(lines):
        for start, open_at, end in bracket_spans(line):
            inside = line[open_at + 1:end - 1]
            for part in split_top_level(inside, OPERATORS):
                if part != line[start:end]:
                    yield "\n".join(lines[:n] + [line[:start] + part + line[end:]] + lines[n + 1:])


def line_deletions(text, keep_first):
    lines = text.split("\n")
    for n in range(len(lines) - 1, keep_first - 1, -1):
        if lines[n].strip():
            yield "\n".join(lines[:n] + lines[n + 1:])


class Reducer:
    def __init__(self, folder, why, verdict, max_tries):
        self.folder, self.why, self.verdict, self.tries_left = folder, why, verdict, max_tries
        self.candidate = os.path.join(folder, "candidate")
        with open(os.path.join(folder, "prog.fold")) as f:
            self.program = f.read()
        with open(os.path.join(folder, "prog.jsonl")) as f:
            self.data = f.read()

    def still_fails(self, program, data):
        if self.tries_left <= 0:
            return False
        self.tries_left -= 1
        os.makedirs(self.candidate, exist_ok=True)
        for header in glob.glob(os.path.join(self.folder, "prog_*.h")):  # the host functions it imports
            shutil.copy(header, self.candidate)
        with open(os.path.join(self.candidate, "prog.fold"), "w") as f:
            f.write(program)
        with open(os.path.join(self.candidate, "prog.jsonl"), "w") as f:
            f.write(data)
        run = subprocess.run(self.verdict + [self.candidate], capture_output=True, text=True)
        return run.returncode != 0 and run.stdout.strip() == self.why

    def first_that_fails(self, programs=(), datas=()):
        for program in programs:
            if len(program) < len(self.program) and self.still_fails(program, self.data):
                self.program = program
                return True
        for data in datas:
            if data.count("\n") >= 1 and self.still_fails(self.program, data):
                self.data = data
                return True
        return False

    def run(self):
        progress = True
        while progress and self.tries_left > 0:
            progress = (self.first_that_fails(programs=line_deletions(self.program, keep_first=1))
                        or self.first_that_fails(programs=subexpression_candidates(self.program))
                        or self.first_that_fails(datas=line_deletions(self.data, keep_first=1)))
        shutil.rmtree(self.candidate, ignore_errors=True)
        for name, text in (("reduced.fold", self.program), ("reduced.jsonl", self.data)):
            with open(os.path.join(self.folder, name), "w") as f:
                f.write(text)
        print(f"reduce: {self.folder}/reduced.fold: {self.program.count(chr(10))} lines, "
              f"{self.data.count(chr(10))} data lines", file=sys.stderr)


def main():
    if "--" not in sys.argv:
        sys.exit(__doc__)
    split = sys.argv.index("--")
    args, verdict = sys.argv[1:split], sys.argv[split + 1:]
    max_tries = 150
    if "--max-tries" in args:
        at = args.index("--max-tries")
        max_tries = int(args[at + 1])
        del args[at:at + 2]
    folder, why = args
    Reducer(folder, why, verdict, max_tries).run()


if __name__ == "__main__":
    main()
