#!/usr/bin/env python3
"""Copies a safetensors file with the first value of its first tensor made NaN.

  poison_params.py IN OUT
"""
import json
import math
import struct
import sys

data = open(sys.argv[1], "rb").read()
(length,) = struct.unpack("<Q", data[:8])
header = json.loads(data[8:8 + length])
first = min((v["data_offsets"][0], k) for k, v in header.items() if k != "__metadata__")[0]
at = 8 + length + first
out = data[:at] + struct.pack("<f", math.nan) + data[at + 4:]
open(sys.argv[2], "wb").write(out)
