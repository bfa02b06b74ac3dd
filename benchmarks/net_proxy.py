"""What network by allowlist costs.

    python -m benchmarks.net_proxy [--runs N] [--megabytes M] [--downloads D]

1. Added start-up cost: `Sandbox.run(["true"])` with an allowlist (the forwarder starts
   inside, the proxy thread outside) over the same run without one, in-process (what
   `serve` pays per command; the CLI adds the same), median of N interleaved runs.
   Target: at most 20 ms.
2. Throughput: a download of M MB from an HTTP server on the host's loopback, through
   the proxy from inside the sandbox (plain HTTP and a CONNECT tunnel) versus the same
   client unconfined straight to the server, median of D interleaved downloads of each;
   the time to the first byte (the request's decision and connect); and the processor
   time the proxy spent per 100 MB (this process's, less what the server's thread took
   for a direct download). Target: CONNECT at least 90 % of direct.
"""

from __future__ import annotations

import argparse
import http.server
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from swifty_sandbox import Sandbox

CLIENT = r"""
import socket, sys, time
port, size, via = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
start = time.perf_counter()
if via == "direct":
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"GET /blob HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
elif via == "http":
    s = socket.create_connection(("127.0.0.1", 3128))
    s.sendall(f"GET http://127.0.0.1:{port}/blob HTTP/1.1\r\n\r\n".encode())
else:
    s = socket.create_connection(("127.0.0.1", 3128))
    s.sendall(f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n".encode())
    assert s.recv(100).startswith(b"HTTP/1.1 200")
    s.sendall(b"GET /blob HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
got = 0
first = None
buf = bytearray(1 << 18)
while True:
    n = s.recv_into(buf)
    if not n:
        break
    if first is None:
        first = time.perf_counter()
    got += n
elapsed = time.perf_counter() - start
assert got >= size, got
print(elapsed, first - start)
"""


def serve_blob(size: int) -> tuple[http.server.ThreadingHTTPServer, int]:
    blob = os.urandom(1 << 20) * (size >> 20)

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Length", str(len(blob)))
            self.end_headers()
            self.wfile.write(blob)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, server.server_address[1]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--megabytes", type=int, default=50)
    parser.add_argument("--downloads", type=int, default=5, help="of each kind, interleaved")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=os.path.expanduser("~")) as tmp:
        project = Path(tmp) / "app"
        (project / ".git").mkdir(parents=True)
        plain = Sandbox(project)
        size = args.megabytes << 20
        server, port = serve_blob(size)
        proxied = Sandbox(project, allow_net=[f"127.0.0.1:{port}"])
        times: dict[str, list[float]] = {"without": [], "with allowlist": []}
        for box in (plain, proxied):
            box.run(["true"])  # warm
        for _ in range(args.runs):
            for name, box in (("without", plain), ("with allowlist", proxied)):
                start = time.perf_counter()
                result = box.run(["true"])
                times[name].append((time.perf_counter() - start) * 1000)
                assert result.exit_code == 0, result.stderr
        base = statistics.median(times["without"])
        added = statistics.median(times["with allowlist"]) - base
        print(f"run -- true: {base:.1f} ms without, +{added:.1f} ms with an allowlist "
              f"(median of {args.runs} interleaved; target <= 20 ms)")

        script = Path(tmp) / "client.py"
        script.write_text(CLIENT)
        speeds: dict[str, list[float]] = {"direct": [], "http": [], "connect": []}
        firsts: dict[str, list[float]] = {via: [] for via in speeds}
        cpu: dict[str, list[float]] = {via: [] for via in speeds}
        for _ in range(args.downloads):
            for via in speeds:
                box = plain if via == "direct" else proxied
                argv = [sys.executable, "-I", str(script), str(port), str(size), via]
                before = os.times()
                if via == "direct":
                    out = subprocess.run(argv, capture_output=True, text=True, check=True)
                    elapsed, first = map(float, out.stdout.split())
                else:
                    result = box.run(argv)
                    assert result.exit_code == 0, result.stderr
                    elapsed, first = map(float, result.stdout.split())
                after = os.times()
                # this process: the blob server's thread always, the proxy's when proxied
                cpu[via].append(after.user + after.system - before.user - before.system)
                speeds[via].append(args.megabytes / elapsed)
                firsts[via].append(first * 1000)
        server.shutdown()
        direct = statistics.median(speeds["direct"])
        serving = statistics.median(cpu["direct"])
        for via, samples in speeds.items():
            speed = statistics.median(samples)
            added = (statistics.median(cpu[via]) - serving) * 1000 * 100 / args.megabytes
            print(f"{args.megabytes} MB {via:8}: {speed:8.0f} MB/s "
                  f"({speed / direct * 100:3.0f} % of direct; target >= 90 %), "
                  f"first byte {statistics.median(firsts[via]):5.1f} ms, "
                  f"proxy CPU {max(0.0, added):5.1f} ms per 100 MB")


if __name__ == "__main__":
    main()
