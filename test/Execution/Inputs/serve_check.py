#!/usr/bin/env python3
"""Checks `DRIVER serve` of the calculator example end to end, and prints
one line per check passed; exits 1 on the first failure.

  serve_check.py DRIVER DATA

DATA is calculator examples (JSON Lines). Checks: /healthz; answers equal
`infer`'s; arrays; concurrent requests batched (from /metrics) with a bad
example (400, its place in the body) and one that fails while running (400)
among them, the others answered; 413 for an oversized body; clients that
disconnect mid-request harm no one; 503 from a full queue; SIGTERM finishes
the request in flight and exits 0; `infer --data -` answers each line as it
comes.
"""
import json
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
examples = [json.loads(line) for line in open(data) if line.strip()]


def start(*options):
    """A server on a free port; gives (process, base URL)."""
    server, url, _ = serve_client.start(driver, *options)
    return server, url


expected = infer_outputs(driver, data)
server, url = start("--max-wait-us", "50000", "--batch-size", "16")
try:
    check(request(url, "/healthz") == (200, "ok\n"), "GET /healthz answers ok")
    status, text = request(url, "/infer", examples[0])
    check(status == 200 and close_to(json.loads(text)["output"], expected[0]),
          "one example: infer's output")
    status, text = request(url, "/infer", examples[:3])
    answers = json.loads(text)
    check(status == 200 and len(answers) == 3 and
          all(close_to(a["output"], e) for a, e in zip(answers, expected[:3])),
          "an array of three: three outputs in order")

    # Concurrent requests: a bad example and one that fails while running
    # (op 7 is outside the 3-row embedding) among 30 good ones.
    bad_field = {"expr": {"Num": {"value": "x"}}, "result": 1}
    bad_op = {"expr": {"Op": {"op": 7, "left": {"Num": {"value": 1}},
                              "right": {"Num": {"value": 2}}}}, "result": 3}
    results = {}

    def send(i, body):
        results[i] = request(url, "/infer", body)

    bodies = {i: examples[i % len(examples)] for i in range(30)}
    bodies[30] = [examples[0], bad_field]
    bodies[31] = bad_op
    threads = [threading.Thread(target=send, args=(i, b)) for i, b in bodies.items()]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    good = all(results[i][0] == 200 and
               close_to(json.loads(results[i][1])["output"], expected[i % len(examples)])
               for i in range(30))
    check(good, "30 concurrent requests answered with infer's outputs")
    status, text = results[30]
    check(status == 400 and "body:1: [1].expr.Num.value: expected a number" in text,
          f"a bad example gets 400 with its place in the body: {text.strip()}")
    status, text = results[31]
    check(status == 400 and "7" in text, f"an example that fails to run gets 400: {text.strip()}")
    metrics = request(url, "/metrics")[1]
    ones = int(re.search(r'foldc_batch_size_bucket\{le="1"\} (\d+)', metrics).group(1))
    batches = int(re.search(r"foldc_batch_size_count (\d+)", metrics).group(1))
    check(batches > ones, f"batched: {batches - ones} of {batches} batches held more than one")
    check(re.search(r'foldc_requests_total\{code="400"\} 2', metrics) is not None,
          "metrics count the two 400s")
    check("foldc_request_seconds_bucket" in metrics, "metrics have a latency histogram")

    status, _ = request(url, "/infer", b"[" + b"1," * (1 << 20) + b"1]")
    check(status == 413, "a body over --max-body-bytes gets 413")
    status, text = request(url, "/infer", b"{not json")
    check(status == 400 and "invalid JSON at column" in text, "a body that is not JSON gets 400")

    # Clients that go away: mid-body, and before reading the answer.
    host, port = url[len("http://"):].split(":")
    partial = socket.create_connection((host, int(port)))
    partial.sendall(b"POST /infer HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{\"expr\":")
    partial.close()
    body = json.dumps(examples[0]).encode()
    impatient = socket.create_connection((host, int(port)))
    impatient.sendall(b"POST /infer HTTP/1.1\r\nHost: x\r\nContent-Length: " +
                      str(len(body)).encode() + b"\r\n\r\n" + body)
    impatient.close()
    time.sleep(0.2)
    status, text = request(url, "/infer", examples[1])
    check(status == 200 and close_to(json.loads(text)["output"], expected[1]),
          "clients that disconnect mid-request harm no one")

    # SIGTERM while a request waits for its batch: it is answered, then exit 0.
    late = {}
    waiting = threading.Thread(target=lambda: late.update(r=request(url, "/infer", examples[2])))
    waiting.start()
    time.sleep(0.01)
    server.send_signal(signal.SIGTERM)
    waiting.join()
    check(late["r"][0] == 200, "a request in flight at SIGTERM is answered")
    check(server.wait(timeout=30) == 0, "SIGTERM: exit status 0")
finally:
    if server.poll() is None:
        server.kill()

# A full queue: one example may wait; the rest of a burst gets 503.
server, url = start("--max-wait-us", "300000", "--max-queue", "1")
try:
    statuses = []
    burst = [threading.Thread(target=lambda: statuses.append(request(url, "/infer", examples[0])[0]))
             for _ in range(8)]
    for t in burst:
        t.start()
    for t in burst:
        t.join()
    check(503 in statuses and 200 in statuses, f"a full queue answers 503: {sorted(statuses)}")
finally:
    server.send_signal(signal.SIGTERM)
    server.wait(timeout=30)

# infer --data -: each line is answered before the next is written.
stream = subprocess.Popen([driver, "infer", "--init", "--data", "-"], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
for i in range(3):
    stream.stdin.write(json.dumps(examples[i]) + "\n")
    stream.stdin.flush()
    answer = json.loads(stream.stdout.readline())
    check(answer["line"] == i + 1 and close_to(answer["output"], expected[i]),
          f"infer --data -: line {i + 1} answered as it came")
stream.stdin.write('{"expr": 5, "result": 1}\n' + json.dumps(examples[3]) + "\n")
stream.stdin.close()
rest = stream.stdout.read().splitlines()
errors = stream.stderr.read()
check(stream.wait() == 1 and len(rest) == 1 and json.loads(rest[0])["line"] == 5,
      "infer --data -: a bad line is reported, the next still answered, exit 1")
check("-:4: expr: expected" in errors, f"infer --data -: the bad line located: {errors.strip()}")
