#!/usr/bin/env python3
"""Copies a safetensors file with one tensor renamed (a file from before a rename).

  rename_tensor.py IN OUT NAME NEW_NAME
"""
import json
import struct
import sys

source, target, name, new_name = sys.argv[1:5]
with open(source, "rb") as f:
    blob = f.read()
size = struct.unpack("<Q", blob[:8])[0]
header = json.loads(blob[8:8 + size])
header[new_name] = header.pop(name)
text = json.dumps(header).encode()
with open(target, "wb") as f:
    f.write(struct.pack("<Q", len(text)) + text + blob[8 + size:])
