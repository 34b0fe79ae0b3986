#!/usr/bin/env python3
"""Checks that docs/architecture.md's code map lists every folder of the tree.

The map is the table under "## Code map": one row per folder, its first cell
the folder in backquotes (`runtime/engine/`). The tree's folders are the
top-level ones (hidden ones and build output aside) and, for `passes/` and
`runtime/`, which hold one part each, their subfolders. Prints each folder
missing from the map and each row naming no folder, and exits 1 when any.

Usage: check_code_map.py [ROOT]   (ROOT: the source tree, default: this checkout)
"""
import os
import re
import sys

SPLIT_PARENTS = ["passes", "runtime"]
IGNORED = {"build", "build-fuzz"}
ROW = re.compile(r"^\|\s*`([^`]+)/`\s*\|")


def tree_folders(root):
    folders = set()
    for name in os.listdir(root):
        if name.startswith(".") or name.startswith("build") or name in IGNORED:
            continue
        if not os.path.isdir(os.path.join(root, name)):
            continue
        if name in SPLIT_PARENTS:
            for part in os.listdir(os.path.join(root, name)):
                if os.path.isdir(os.path.join(root, name, part)) and not part.startswith("."):
                    folders.add(f"{name}/{part}")
        else:
            folders.add(name)
    return folders


def mapped_folders(doc):
    rows, in_map = set(), False
    for line in doc.splitlines():
        if line.startswith("## "):
            in_map = line.strip() == "## Code map"
            continue
        match = ROW.match(line) if in_map else None
        if match:
            rows.add(match.group(1))
    return rows


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(
        os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(root, "docs", "architecture.md"), encoding="utf-8") as f:
        mapped = mapped_folders(f.read())
    tree = tree_folders(root)
    problems = [f"{f}/: in the tree, not in the code map" for f in sorted(tree - mapped)]
    problems += [f"{f}/: in the code map, not in the tree" for f in sorted(mapped - tree)]
    for p in problems:
        print(p)
    print(f"code map: {len(mapped)} folder(s) listed, {len(problems)} difference(s) from the tree")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
