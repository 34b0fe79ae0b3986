#!/usr/bin/env python3
"""Faults under load for `DRIVER serve` over loopback, bounded in count and
time; prints one line per check passed, exits 1 on the first failure.

  serve_faults.py DRIVER DATA [REQUESTS]

DATA is calculator examples (JSON Lines). Checks:
- REQUESTS (default 600) requests from 8 clients, two in three of them a
  well-formed body mutated at random (truncated, bytes changed or inserted,
  numbers out of range, deep nesting, wrong types, garbage): each gets 200 or
  400, never a failure of the server, and every well-formed request among
  them gets infer's output;
- a client that sends half a request and hangs is disconnected after
  --read-timeout-ms, and one that sends slowly is answered, while both hold
  no one else up;
- kill -9 of the server under load, then a restart on the same port, serves
  again.
"""
import json
import random
import re
import signal
import socket
import subprocess
import sys
import threading
import time

import serve_client
from serve_client import check, close_to, infer_outputs, request

driver, data = sys.argv[1], sys.argv[2]
count = int(sys.argv[3]) if len(sys.argv) > 3 else 600
examples = [line.strip() for line in open(data) if line.strip()]
rng = random.Random(7)
READ_TIMEOUT_MS = 500


def start(port=0):
    server, _, port = serve_client.start(driver, "--port", str(port), "--batch-size", "16",
                                         "--read-timeout-ms", str(READ_TIMEOUT_MS))
    # Drain stderr so that the server never blocks writing to it.
    threading.Thread(target=server.stderr.read, daemon=True).start()
    return server, port


def post(port, body, timeout=30):
    return request(f"http://127.0.0.1:{port}", "/infer", body, timeout)


def mutated(text):
    """A body made from a well-formed one by one random fault."""
    b = bytearray(text.encode())
    fault = rng.randrange(9)
    if fault == 0:
        return bytes(b[:rng.randrange(len(b))])
    if fault == 1:
        for _ in range(rng.randint(1, 4)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        return bytes(b)
    if fault == 2:
        at = rng.randrange(len(b) + 1)
        return bytes(b[:at]) + bytes(rng.randrange(256) for _ in range(rng.randint(1, 8))) + bytes(b[at:])
    if fault == 3:
        return re.sub(rb"-?\d+(\.\d+)?", rng.choice([b"1e999", b"-1e400", b"99999999999999999999", b"1e39"]),
                      bytes(b), count=1)
    if fault == 4:
        depth = rng.choice([100, 10000, 100000])
        return b"[" * depth + b"]" * depth
    if fault == 5:
        return rng.choice([b"{}", b"[]", b"null", b"\"text\"", b"{\"expr\": 5}", b"[1, 2, 3]", b""])
    if fault == 6:
        return bytes(rng.randrange(256) for _ in range(rng.randint(1, 64)))
    if fault == 7:
        return b"[" + bytes(b) + b", " + bytes(b[:len(b) // 2]) + b"]"
    return bytes(b).replace(b"\"value\"", b"\"valeu\"", 1)


expected = infer_outputs(driver, data)
server, port = start()
try:
    # Malformed bodies interleaved with well-formed ones.
    statuses, wrong, failures = {}, [], []
    lock = threading.Lock()
    plan = [(i, i % 3 == 0) for i in range(count)]
    bodies = [(i, good, examples[i % len(examples)].encode() if good
               else mutated(examples[i % len(examples)])) for i, good in plan]

    def client(share):
        for i, good, body in share:
            try:
                status, text = post(port, body)
            except Exception as error:  # a failure of the server, not of the request
                with lock:
                    failures.append(f"request {i}: {error!r}")
                continue
            with lock:
                statuses[status] = statuses.get(status, 0) + 1
                if good and (status != 200 or
                             not close_to(json.loads(text)["output"], expected[i % len(examples)])):
                    wrong.append(f"request {i}: {status} {text[:200]}")

    threads = [threading.Thread(target=client, args=(bodies[c::8],)) for c in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    check(not failures, f"{count} requests, malformed and not, from 8 clients: no failure "
          f"({failures[:3]})")
    check(set(statuses) <= {200, 400}, f"every answer 200 or 400: {sorted(statuses.items())}")
    check(not wrong, f"all {len(plan[::3])} well-formed requests answered with infer's output "
          f"({wrong[:3]})")
    check(server.poll() is None, "the server still runs")

    # A client that hangs halfway is disconnected; one that sends slowly is
    # answered; a well-formed request meanwhile is answered at once.
    hanging = socket.create_connection(("127.0.0.1", port))
    hanging.sendall(b"POST /infer HTTP/1.1\r\nHost: x\r\nContent-Length: 400\r\n\r\n{\"expr\"")
    slow = socket.create_connection(("127.0.0.1", port))
    body = examples[0].encode()
    slow_request = (b"POST /infer HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                    b"Content-Length: %d\r\n\r\n" % len(body)) + body
    answer = {}

    def send_slowly():
        for k in range(0, len(slow_request), 8):
            slow.sendall(slow_request[k:k + 8])
            time.sleep(READ_TIMEOUT_MS / 1000 / 5)
        answer["slow"] = b"".join(iter(lambda: slow.recv(65536), b""))

    sender = threading.Thread(target=send_slowly)
    sender.start()
    began = time.monotonic()
    status, text = post(port, examples[1].encode())
    check(status == 200 and time.monotonic() - began < 2,
          "a request beside a hanging and a slow client is answered at once")
    hanging.settimeout(10)
    began = time.monotonic()
    got = b""
    try:  # the server may answer 4xx before it closes: read to the end
        while chunk := hanging.recv(65536):
            got += chunk
        closed = True
    except socket.timeout:
        closed = False
    waited = time.monotonic() - began
    check(closed and (got == b"" or got.startswith(b"HTTP/1.1 4")),
          f"the hanging client is disconnected after {waited:.1f} s ({got[:40]!r})")
    sender.join(timeout=60)
    check(answer.get("slow", b"").startswith(b"HTTP/1.1 200"), "the slow client is answered")

    # kill -9 under load; a restart on the same port serves again.
    stop = threading.Event()

    def load():
        while not stop.is_set():
            try:
                post(port, examples[2].encode(), timeout=5)
            except Exception:
                pass

    loaders = [threading.Thread(target=load) for _ in range(4)]
    for t in loaders:
        t.start()
    time.sleep(0.5)
    server.send_signal(signal.SIGKILL)
    server.wait()
    server, restarted = start(port)
    status, text = post(port, examples[2].encode())
    stop.set()
    for t in loaders:
        t.join()
    check(restarted == port and status == 200 and close_to(json.loads(text)["output"], expected[2]),
          "after kill -9 under load, a restart on the same port serves again")
finally:
    server.send_signal(signal.SIGTERM)
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.kill()
