"""What the serving tests (serve_check.py, serve_faults.py) share: starting
`DRIVER serve`, requests over loopback, and the expected outputs."""
import json
import re
import subprocess
import urllib.error
import urllib.request


def start(driver, *options):
    """`DRIVER serve --init OPTIONS` (a free port unless --port is among
    them); gives (process, base URL, port) once it listens."""
    if "--port" not in options:
        options = ("--port", "0") + options
    server = subprocess.Popen([driver, "serve", "--init", *options], stderr=subprocess.PIPE,
                              text=True)
    line = server.stderr.readline()
    match = re.search(r"serving on (http://[\d.]+:(\d+))", line)
    if not match:
        raise AssertionError(f"no 'serving on' line: {line!r}")
    return server, match.group(1), int(match.group(2))


def request(url, path, body=None, timeout=30):
    """(status, text) of a GET, or of a POST of `body` (bytes or a JSON value)."""
    if body is not None and not isinstance(body, bytes):
        body = json.dumps(body).encode()
    req = urllib.request.Request(url + path, data=body, method="POST" if body is not None else "GET")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def check(condition, what):
    if not condition:
        raise AssertionError(what)
    print("ok:", what, flush=True)


def infer_outputs(driver, data):
    """What `DRIVER infer --init` prints for DATA: the expected outputs."""
    out = subprocess.run([driver, "infer", "--init", "--data", data], capture_output=True,
                         text=True, check=True).stdout
    return [json.loads(line)["output"] for line in out.splitlines()]


def close_to(a, b):
    if isinstance(a, list):
        return len(a) == len(b) and all(close_to(x, y) for x, y in zip(a, b))
    return abs(a - b) <= 1e-5 * max(1.0, abs(b))
