#!/usr/bin/env python3
"""Writes a valid safetensors file for the safetensors fuzzer's parameters
(a.W f32[3, 2], b f32[4], e.E f32[5, 2]): the seed its mutations start from.
usage: seed_safetensors.py FILE"""
import json
import struct
import sys

tensors = [("a.W", [3, 2]), ("b", [4]), ("e.E", [5, 2])]
header, blob, offset = {}, b"", 0
for name, shape in tensors:
    n = 1
    for d in shape:
        n *= d
    header[name] = {"dtype": "F32", "shape": shape, "data_offsets": [offset, offset + 4 * n]}
    blob += struct.pack("<%df" % n, *([0.5] * n))
    offset += 4 * n
text = json.dumps(header).encode()
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<Q", len(text)) + text + blob)
