#!/usr/bin/env python3
"""Checks that includes go one way: no file includes from a layer above its own.

The layers and what each may include are the map of docs/architecture.md:
the compiler's phases in order (frontend, passes/builtins, passes/sema,
passes/batching, codegen, pipeline, tools) beside the runtime's parts
(support, engine, io, model, parallel, driver, python, reference), which know
nothing of the compiler. Prints each include that breaks the rule as
FILE:LINE, and each folder of the compiler's or the runtime's that is in no
layer (a new folder must be given its place in the map), and exits 1.

Usage: check_layering.py [ROOT]   (ROOT: the source tree, default: this checkout)
"""
import os
import re
import sys

COMPILER = ["frontend", "passes/builtins", "passes/sema", "passes/batching", "codegen",
            "pipeline", "tools"]
RUNTIME_BELOW = {
    "runtime/support": [],
    "runtime/engine": ["runtime/support"],
    "runtime/io": ["runtime/support", "runtime/engine"],
    "runtime/model": ["runtime/support", "runtime/engine", "runtime/io"],
    "runtime/parallel": ["runtime/support", "runtime/engine"],
    "runtime/driver": ["runtime/support", "runtime/engine", "runtime/io", "runtime/model",
                       "runtime/parallel"],
    "runtime/python": ["runtime/support", "runtime/engine", "runtime/io", "runtime/model"],
    "runtime/reference": ["runtime/support", "runtime/engine", "runtime/io", "runtime/model"],
}
# Folders whose every subfolder holding code must be a layer of the map.
MAPPED_PARENTS = ["passes", "runtime"]


def allowed_layers(layer):
    """The layers whose headers a file of `layer` may include (its own too)."""
    if layer in COMPILER:
        below = COMPILER[:COMPILER.index(layer) + 1]
        # foldc runs the compiler on a large-stack thread of the runtime's support layer.
        return below + (["runtime/support"] if layer == "tools" else [])
    return RUNTIME_BELOW[layer] + [layer]


def layer_of(path):
    """The layer a project path belongs to (the longest matching prefix), or None."""
    layers = COMPILER + list(RUNTIME_BELOW)
    matches = [l for l in layers if path == l or path.startswith(l + "/")]
    return max(matches, key=len) if matches else None


INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def violations(root):
    for layer in COMPILER + list(RUNTIME_BELOW):
        folder = os.path.join(root, layer)
        for directory, _, files in os.walk(folder):
            for name in sorted(files):
                if not name.endswith((".h", ".cpp", ".def")):
                    continue
                path = os.path.join(directory, name)
                relative = os.path.relpath(path, root)
                if layer_of(relative) != layer:
                    continue  # a nested layer's file: checked as that layer's
                with open(path, encoding="utf-8") as source:
                    for number, line in enumerate(source, 1):
                        match = INCLUDE.match(line)
                        if not match:
                            continue
                        target = layer_of(match.group(1))
                        if target is not None and target not in allowed_layers(layer):
                            yield f"{relative}:{number}: {layer} includes {match.group(1)} " \
                                  f"(layer {target}, above or beside it)"


def unmapped_folders(root):
    """Folders of code under the compiler's and runtime's parents that are in no layer."""
    layers = set(COMPILER) | set(RUNTIME_BELOW)
    for parent in MAPPED_PARENTS:
        folder = os.path.join(root, parent)
        if not os.path.isdir(folder):
            continue
        for name in sorted(os.listdir(folder)):
            path = os.path.join(folder, name)
            holds_code = os.path.isdir(path) and any(
                f.endswith((".h", ".cpp", ".def")) for _, _, files in os.walk(path) for f in files)
            if holds_code and f"{parent}/{name}" not in layers:
                yield f"{parent}/{name}: a folder in no layer (give it its place in " \
                      f"scripts/check_layering.py and docs/architecture.md)"


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(
        os.path.dirname(os.path.abspath(__file__)))
    found = list(violations(root))
    unmapped = list(unmapped_folders(root))
    for v in found + unmapped:
        print(v)
    print(f"layering: {len(found)} include(s) against the layers")
    if unmapped:
        print(f"layering: {len(unmapped)} folder(s) in no layer")
    return 1 if found or unmapped else 0


if __name__ == "__main__":
    sys.exit(main())
