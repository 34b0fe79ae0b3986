#!/usr/bin/env python3
"""Checks that no phase after name resolution looks a builtin or option up by name.

Name resolution (passes/sema/NameResolution.cpp) finds each builtin's and each
named argument's row of the tables in passes/builtins/ once; later phases read
the enums it stored (Symbol::builtin, ResolvedNames::options). This prints
every place in the later phases that calls a lookup by name, or compares a
named argument's name or a builtin's name with a string literal, as
FILE:LINE, and exits 1 when there is any.

Usage: check_names_resolved.py [ROOT]   (ROOT: the source tree, default: this checkout)
"""
import os
import re
import sys

LATER_PHASES = ["passes/sema", "passes/batching", "codegen", "pipeline"]
# The places that resolve names: name resolution, and layer instantiation,
# which runs before it (and the tables' own files, which are not scanned).
RESOLVERS = ["passes/sema/NameResolution.cpp", "passes/sema/InstantiateLayers.cpp"]
LOOKUPS = re.compile(r"\b(builtinNamed|layerKindNamed|initKindNamed|activationNamed|optionNamed|"
                     r"opNamed|resolveBuiltinName|builtinIn)\s*\(")
# `arg.name == "axis"`, `a.name != "lr_scale"`, `name->name == "fc"`
NAME_COMPARE = re.compile(r"\b(arg|a|argument|option|name|callee|ctor)(\.|->)name\s*[!=]=\s*\"")


def findings(root):
    for phase in LATER_PHASES:
        for directory, _, files in os.walk(os.path.join(root, phase)):
            for file in sorted(files):
                if not file.endswith((".h", ".cpp")):
                    continue
                path = os.path.join(directory, file)
                relative = os.path.relpath(path, root)
                if relative in RESOLVERS:
                    continue
                with open(path, encoding="utf-8") as source:
                    for number, line in enumerate(source, 1):
                        code = line.split("//")[0]
                        if LOOKUPS.search(code):
                            yield f"{relative}:{number}: looks a builtin or option up by name"
                        elif NAME_COMPARE.search(code):
                            yield f"{relative}:{number}: compares a name with a string"


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(
        os.path.dirname(os.path.abspath(__file__)))
    found = list(findings(root))
    for f in found:
        print(f)
    print(f"names: {len(found)} lookup(s) by name after name resolution")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
