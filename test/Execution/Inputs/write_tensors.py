#!/usr/bin/env python3
"""Writes a safetensors file of constant F32 tensors.

  write_tensors.py OUT NAME SHAPE VALUE [NAME SHAPE VALUE...]

SHAPE is the dimensions joined by 'x' (5x3); every element is VALUE.
"""
import json
import struct
import sys

out, specs = sys.argv[1], sys.argv[2:]
header, data = {}, b""
for name, shape, value in zip(specs[0::3], specs[1::3], specs[2::3]):
    dims = [int(d) for d in shape.split("x")]
    count = 1
    for d in dims:
        count *= d
    values = struct.pack(f"<{count}f", *([float(value)] * count))
    header[name] = {"dtype": "F32", "shape": dims, "data_offsets": [len(data), len(data) + len(values)]}
    data += values
text = json.dumps(header).encode()
with open(out, "wb") as f:
    f.write(struct.pack("<Q", len(text)) + text + data)
