#!/usr/bin/env python3
"""Hostile and careless clients against `DRIVER serve` over loopback, each
fault bounded in time; prints one line per check passed (with the figures
measured), exits 1 on the first failure.

  serve_hostile.py DRIVER DATA

DATA is calculator examples (JSON Lines). The checks, in order: a port in
use; 1,000 idle and 200 slow-drip connections beside real requests; a
connection limit; bodies over the limit however framed (a 1 GB chunked body
offered, resident memory watched); 10^4 pipelined requests on 8
connections; an array larger than the queue; keep-alive; a stalled and a
too-slow request; a multipart form; header fields too large; a long request
beside short ones; SIGTERM with a request in flight and one arriving.
"""
import json
import os
import resource
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time

import serve_client
from serve_client import check, close_to, infer_outputs, request

driver, data = sys.argv[1], sys.argv[2]
examples = [line.strip() for line in open(data) if line.strip()]
expected = infer_outputs(driver, data)
READ_TIMEOUT_MS = 400
REQUEST_TIMEOUT_MS = 1500

# 1,200 connections of our own, and the server's.
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def start(*options):
    server, _, port = serve_client.start(driver, "--read-timeout-ms", str(READ_TIMEOUT_MS),
                                         "--request-timeout-ms", str(REQUEST_TIMEOUT_MS),
                                         *options)
    threading.Thread(target=server.stderr.read, daemon=True).start()
    return server, port


def stop(server):
    server.send_signal(signal.SIGTERM)
    try:
        return server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.kill()
        return None


def resident_kb(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


def connect(port):
    sock = socket.create_connection(("127.0.0.1", port))
    sock.settimeout(30)
    return sock


def post_bytes(body, extra=b"", close=False):
    return (b"POST /infer HTTP/1.1\r\nHost: x\r\n" + extra +
            (b"Connection: close\r\n" if close else b"") +
            b"Content-Length: %d\r\n\r\n" % len(body) + body)


def read_answer(stream):
    """(status, headers, body) of one answer read from a socket's file."""
    line = stream.readline()
    if not line:
        return None, {}, b""
    status = int(line.split()[1])
    headers = {}
    while (line := stream.readline()) not in (b"\r\n", b""):
        name, _, value = line.decode().partition(":")
        headers[name.strip().lower()] = value.strip()
    body = stream.read(int(headers.get("content-length", "0")))
    return status, headers, body


def timed(fn):
    began = time.monotonic()
    result = fn()
    return result, time.monotonic() - began


def output_of(body):
    return json.loads(body)["output"]


# --- A port in use: the second server fails at start, saying so.
server, port = start()
try:
    second = subprocess.run([driver, "serve", "--init", "--port", str(port)], capture_output=True,
                            text=True, timeout=60)
    check(second.returncode == 1 and f"cannot listen on 127.0.0.1:{port}: Address already in use"
          in second.stderr, f"a second serve on a port in use exits 1 saying so "
          f"({second.returncode}, {second.stderr.strip()[-80:]!r})")

    # --- 1,000 idle and 200 slow-drip connections cost no worker.
    idle = [connect(port) for _ in range(1000)]
    drip_body = examples[0].encode()
    drip_request = post_bytes(drip_body)
    drips = [connect(port) for _ in range(200)]
    dripping = threading.Event()

    def drip():
        k = 0
        while not dripping.is_set() and k < len(drip_request):
            for sock in drips:
                sock.sendall(drip_request[k:k + 1])
            k += 1
            dripping.wait(0.1)

    dripper = threading.Thread(target=drip)
    dripper.start()
    time.sleep(0.3)
    health, answers = [], []
    for i in range(10):
        (status, text), seconds = timed(lambda: request(f"http://127.0.0.1:{port}", "/healthz"))
        check(status == 200, f"/healthz answered beside 1,200 open connections ({i})") if i == 0 \
            else None
        health.append(seconds)
        (status, text), seconds = timed(
            lambda: request(f"http://127.0.0.1:{port}", "/infer", examples[1].encode()))
        if status != 200 or not close_to(output_of(text), expected[1]):
            raise AssertionError(f"a request beside them: {status} {text[:100]}")
        answers.append(seconds)
    dripping.set()
    dripper.join()
    fmt = lambda xs: f"median {statistics.median(xs) * 1000:.1f} ms, max {max(xs) * 1000:.1f} ms"
    check(statistics.median(health) < 0.1 and max(health) < 1,
          f"with 1,000 idle and 200 slow-drip connections, /healthz answers in {fmt(health)}")
    check(statistics.median(answers) < 0.1 and max(answers) < 1,
          f"and a real request in {fmt(answers)}")
    for sock in idle + drips:
        sock.close()

    # --- A body over the limit, however framed, is refused before it is held.
    time.sleep(0.2)
    for _ in range(5):
        request(f"http://127.0.0.1:{port}", "/infer", examples[2].encode())
    idle_kb = resident_kb(server.pid)
    sock = connect(port)
    sock.sendall(b"POST /infer HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000000\r\n\r\n")
    status, headers, body = read_answer(sock.makefile("rb"))
    sock.close()
    check(status == 413 and b"--max-body-bytes" in body,
          f"Content-Length: 10^9 gets 413 before any of the body ({status} {body[:60]!r})")

    sock = connect(port)
    sock.sendall(b"POST /infer HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
    answer = {}
    reader = threading.Thread(target=lambda: answer.update(
        zip(("status", "headers", "body"), read_answer(sock.makefile("rb")))))
    reader.start()
    chunk = b"%x\r\n" % 65536 + b"1" * 65536 + b"\r\n"
    sent, peak_kb = 0, idle_kb
    try:
        while sent < 10 ** 9 and reader.is_alive():
            sock.sendall(chunk)
            sent += 65536
            if sent % (16 << 20) == 0:
                peak_kb = max(peak_kb, resident_kb(server.pid))
    except OSError:
        pass  # the server closed the connection after its answer
    reader.join(timeout=30)
    peak_kb = max(peak_kb, resident_kb(server.pid))
    sock.close()
    check(answer.get("status") == 413,
          f"a 1 GB chunked body is refused with 413 after {sent / 2 ** 20:.1f} MB sent")
    check(peak_kb < 2 * idle_kb,
          f"resident memory stays under twice its idle size ({idle_kb} kB idle, {peak_kb} kB at most)")

    # --- 10^4 pipelined requests on 8 connections, answered in order.
    def pipeline(c, results):
        sock = connect(port)
        indices = [(c * 1250 + k) % len(examples) for k in range(1250)]
        stream = b"".join(post_bytes(examples[i].encode()) for i in indices)
        threading.Thread(target=sock.sendall, args=(stream,), daemon=True).start()
        answers = sock.makefile("rb")
        wrong = 0
        for i in indices:
            status, _, body = read_answer(answers)
            if status != 200 or not close_to(output_of(body), expected[i]):
                wrong += 1
        results[c] = wrong
        sock.close()

    results = {}
    began = time.monotonic()
    pipes = [threading.Thread(target=pipeline, args=(c, results)) for c in range(8)]
    for t in pipes:
        t.start()
    for t in pipes:
        t.join()
    check(len(results) == 8 and sum(results.values()) == 0,
          f"10^4 pipelined requests on 8 connections all answered, in order, with infer's "
          f"outputs, in {time.monotonic() - began:.1f} s ({results})")

    # --- An array that can never fit the queue is a 413 that says the limit.
    many = ("[" + ",".join(['{"expr": {"Num": {"value": 1}}, "result": 1}'] * 5000) + "]").encode()
    status, text = request(f"http://127.0.0.1:{port}", "/infer", many)
    check(status == 413 and "--max-queue 4096" in text,
          f"an array of 5000 examples (--max-queue 4096) gets 413 ({text.strip()[:90]})")

    # --- Keep-alive: a connection serves as many requests as its client sends.
    sock = connect(port)
    answers = sock.makefile("rb")
    kept = 0
    for k in range(20):
        sock.sendall(post_bytes(examples[k % len(examples)].encode(),
                                b"Connection: keep-alive\r\nKeep-Alive: max=5\r\n"))
        status, headers, body = read_answer(answers)
        kept += status == 200 and headers.get("connection", "").lower() != "close"
    sock.close()
    check(kept == 20, f"one connection answers 20 requests in a row ({kept} kept it open)")

    # --- A stalled request is closed after --read-timeout-ms, once.
    sock = connect(port)
    sock.sendall(b"POST /infer HTTP/1.1\r\nHost: x\r\nContent-Length: 400\r\n\r\n{\"expr\"")
    (status, _, body), waited = timed(lambda: read_answer(sock.makefile("rb")))
    sock.close()
    check(status == 408 and READ_TIMEOUT_MS / 1000 <= waited < 2 * READ_TIMEOUT_MS / 1000,
          f"a stalled request gets 408 after {waited * 1000:.0f} ms "
          f"(--read-timeout-ms {READ_TIMEOUT_MS})")

    # --- A request dripped under the read timeout ends at the request timeout.
    sock = connect(port)
    began = time.monotonic()
    slow = post_bytes(examples[3].encode() + b" " * 4000)
    got = {}
    reader = threading.Thread(target=lambda: got.update(
        zip(("status", "headers", "body"), read_answer(sock.makefile("rb")))))
    reader.start()
    try:
        for k in range(0, len(slow), 4):
            if not reader.is_alive():
                break
            sock.sendall(slow[k:k + 4])
            time.sleep(READ_TIMEOUT_MS / 1000 / 4)
    except OSError:
        pass
    reader.join(timeout=30)
    waited = time.monotonic() - began
    sock.close()
    check(got.get("status") == 408 and waited < REQUEST_TIMEOUT_MS / 1000 + 1,
          f"a request dripped a byte at a time gets 408 after {waited * 1000:.0f} ms "
          f"(--request-timeout-ms {REQUEST_TIMEOUT_MS})")

    # --- A multipart form is told what to send instead.
    boundary = b"xyzzy"
    form = (b"--" + boundary + b"\r\nContent-Disposition: form-data; name=\"x\"\r\n\r\n" +
            examples[0].encode() + b"\r\n--" + boundary + b"--\r\n")
    sock = connect(port)
    sock.sendall(post_bytes(form, b"Content-Type: multipart/form-data; boundary=xyzzy\r\n"))
    status, _, body = read_answer(sock.makefile("rb"))
    sock.close()
    check(status == 415 and b"multipart" in body, f"a multipart body gets 415: {body.strip()!r}")

    # --- Header fields past 32 KiB.
    sock = connect(port)
    sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 40000 + b"\r\n\r\n")
    status, _, body = read_answer(sock.makefile("rb"))
    sock.close()
    check(status == 431, f"header fields of 40 kB get 431: {body.strip()!r}")
    check(server.poll() is None, "the server still runs")
finally:
    stop(server)

# --- The connection limit: beyond it, a clear refusal.
server, port = start("--max-connections", "20")
try:
    held = [connect(port) for _ in range(20)]
    time.sleep(0.2)
    status, text = request(f"http://127.0.0.1:{port}", "/healthz")
    check(status == 503 and "--max-connections 20" in text,
          f"the 21st connection gets 503: {text.strip()}")
    for sock in held:
        sock.close()
    time.sleep(0.2)
    status, text = request(f"http://127.0.0.1:{port}", "/healthz")
    check(status == 200, "and once they close, a new one is served")
finally:
    stop(server)

# --- A long request holds short ones up by at most its own batch. (Under
# ThreadSanitizer, whose unwinder fails on data 10^5 levels deep,
# scripts/sanitize.sh asks for less: FOLDC_SERVE_DEEP.)
depth = int(os.environ.get("FOLDC_SERVE_DEEP", "100000"))
deep = ('{"expr": ' + '{"Op": {"op": 0, "left": ' * depth + '{"Num": {"value": 1}}' +
        ', "right": {"Num": {"value": 1}}}}' * depth + ', "result": 0}').encode()
deep_file = data + ".deep.jsonl"
with open(deep_file, "wb") as f:
    f.write(deep + b"\n")
expected_deep = infer_outputs(driver, deep_file)[0]
server, port = start("--max-body-bytes", str(len(deep) + 1))
try:
    long_answer = {}

    def send_deep():
        (status, text), seconds = timed(
            lambda: request(f"http://127.0.0.1:{port}", "/infer", deep, timeout=120))
        long_answer.update(status=status, seconds=seconds, text=text)

    sender = threading.Thread(target=send_deep)
    sender.start()
    shorts = []
    while sender.is_alive():
        (status, text), seconds = timed(
            lambda: request(f"http://127.0.0.1:{port}", "/infer", examples[1].encode()))
        if status != 200:
            raise AssertionError(f"a short request beside a long one: {status} {text[:100]}")
        shorts.append(seconds)
    sender.join()
    check(long_answer["status"] == 200 and close_to(output_of(long_answer["text"]), expected_deep),
          f"a {depth}-deep request is answered ({long_answer['seconds']:.2f} s): "
          f"{long_answer['text'][:80]}")
    check(max(shorts) <= long_answer["seconds"] + 0.5,
          f"{len(shorts)} short requests meanwhile waited at most {max(shorts):.2f} s "
          f"(median {statistics.median(shorts) * 1000:.1f} ms)")
finally:
    stop(server)

# --- SIGTERM: the request in flight is answered; one arriving on an open
# connection gets 503 and Connection: close; the server exits 0.
server, port = start("--max-wait-us", "300000", "--drain-ms", "3000")
try:
    open_sock = connect(port)
    in_flight = connect(port)
    in_flight.sendall(post_bytes(examples[4].encode()))
    time.sleep(0.1)  # queued, waiting 300 ms for a batch to fill
    server.send_signal(signal.SIGTERM)
    status, headers, body = read_answer(in_flight.makefile("rb"))
    check(status == 200 and close_to(output_of(body), expected[4]) and
          headers.get("connection") == "close",
          f"after SIGTERM the request in flight is answered, Connection: close ({status})")
    open_sock.sendall(post_bytes(examples[5].encode()))
    status, headers, body = read_answer(open_sock.makefile("rb"))
    check(status == 503 and headers.get("connection") == "close",
          f"a request arriving on an open connection gets 503, Connection: close "
          f"({status} {body.strip()!r})")
    code = server.wait(timeout=30)
    check(code == 0, f"the server exits {code}")
finally:
    if server.poll() is None:
        server.kill()
