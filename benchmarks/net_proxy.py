"""What network by allowlist costs.

    python -m benchmarks.net_proxy [--runs N] [--megabytes M]

1. Added start-up cost: `Sandbox.run(["true"])` with an allowlist (the forwarder starts
   inside, the proxy thread outside) over the same run without one, in-process (what
   `serve` pays per command; the CLI adds the same), median of N interleaved runs.
   Target: at most 20 ms.
2. Throughput: a download of M MB from an HTTP server on the host's loopback, through
   the proxy from inside the sandbox (plain HTTP and a CONNECT tunnel) versus the same
   client unconfined straight to the server. Target: within 20 %.
"""

from __future__ import annotations

import argparse
import http.server
import os
import statistics
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
buf = bytearray(1 << 18)
while True:
    n = s.recv_into(buf)
    if not n:
        break
    got += n
elapsed = time.perf_counter() - start
assert got >= size, got
print(elapsed)
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
        for _ in range(5):
            for via in speeds:
                box = plain if via == "direct" else proxied
                argv = [sys.executable, "-I", str(script), str(port), str(size), via]
                if via == "direct":
                    import subprocess

                    out = subprocess.run(argv, capture_output=True, text=True, check=True)
                    elapsed = float(out.stdout)
                else:
                    result = box.run(argv)
                    assert result.exit_code == 0, result.stderr
                    elapsed = float(result.stdout)
                speeds[via].append(args.megabytes / elapsed)
        server.shutdown()
        direct = statistics.median(speeds["direct"])
        for via, samples in speeds.items():
            speed = statistics.median(samples)
            print(f"{args.megabytes} MB {via:8}: {speed:8.0f} MB/s "
                  f"({speed / direct * 100:.0f} % of direct; target >= 80 %)")


if __name__ == "__main__":
    main()
