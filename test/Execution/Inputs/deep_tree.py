#!/usr/bin/env python3
"""Writes sentiment trees nested DEPTH levels deep (left-deep chains), and
with `--bad-word`, one whose leaf's word is an array nested DEPTH deep.
Built as text: a JSON library would itself recurse once per level.
usage: deep_tree.py DEPTH [--bad-word]"""
import sys

depth = int(sys.argv[1])
leaf = '{"Leaf": {"word": 1, "label": 2}}'
if len(sys.argv) > 2 and sys.argv[2] == "--bad-word":
    print('{"Leaf": {"word": ' + "[" * depth + "]" * depth + ', "label": 2}}')
else:
    chain = '{"Node": {"label": 3, "right": {"Leaf": {"word": 4, "label": 1}}, "left": '
    print(chain * depth + leaf + "}}" * depth)
    print(leaf)
