"""A headless Chromium driven over the DevTools protocol on a pipe
(`--remote-debugging-pipe`: fd 3 in, fd 4 out, NUL-separated JSON), started once and
used for many pages; and a PNG reader for its screenshots. Standard library only."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import struct
import subprocess
import zlib
from pathlib import Path
from typing import Any

CANDIDATES = ("/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome")


def find_chromium() -> str | None:
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return None


class Browser:
    WIDTH, HEIGHT = 1200, 900

    def __init__(self, executable: str, profile: Path) -> None:
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()

        # The child's fd 3 reads our commands, fd 4 writes answers (kept open by
        # pass_fds: the descriptors are closed after `preexec_fn` runs).
        def wire() -> None:
            high_r, high_w = os.dup(to_child_r), os.dup(from_child_w)
            os.dup2(high_r, 3, inheritable=True)
            os.dup2(high_w, 4, inheritable=True)

        self.proc = subprocess.Popen(
            [executable, "--headless", "--no-sandbox", "--disable-gpu",
             "--remote-debugging-pipe", f"--user-data-dir={profile}", "--no-first-run",
             "--hide-scrollbars", "--mute-audio", f"--window-size={self.WIDTH},{self.HEIGHT}",
             "about:blank"],
            preexec_fn=wire, pass_fds=(3, 4), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        os.close(to_child_r)
        os.close(from_child_w)
        self._buffer = b""
        self._next = 0
        self.events: list[dict[str, Any]] = []
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target,
                                 flatten=True)["sessionId"]
        self.page("Page.enable")
        self.page("Runtime.enable")
        self.page("Emulation.setDeviceMetricsOverride", width=self.WIDTH, height=self.HEIGHT,
                  deviceScaleFactor=1, mobile=False)

    def _send(self, message: dict[str, Any]) -> None:
        os.write(self._to_child, json.dumps(message).encode() + b"\0")

    def _receive(self) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            chunk = os.read(self._from_child, 1 << 16)
            if not chunk:
                raise RuntimeError("chromium closed its DevTools pipe")
            self._buffer += chunk
        raw, _, self._buffer = self._buffer.partition(b"\0")
        message: dict[str, Any] = json.loads(raw)
        return message

    def call(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params}
        if session is not None:
            message["sessionId"] = session
        self._send(message)
        while True:
            answer = self._receive()
            if answer.get("id") == self._next:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                result: dict[str, Any] = answer.get("result", {})
                return result
            self.events.append(answer)

    def page(self, method: str, **params: Any) -> dict[str, Any]:
        return self.call(method, self.session, **params)

    def open(self, url: str) -> None:
        """Navigate and wait for the load event (the page's script has run by then)."""
        self.events.clear()
        self.page("Page.navigate", url=url)
        while not any(e.get("method") == "Page.loadEventFired" for e in self.events):
            self.events.append(self._receive())

    def evaluate(self, expression: str) -> Any:
        result = self.page("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(result["exceptionDetails"])
        return result["result"].get("value")

    def screenshot(self, x: int = 0, y: int = 0, width: int = WIDTH, height: int = HEIGHT
                   ) -> Image:
        """The viewport's region (CSS pixels, scale 1): decoding is pure Python, so a
        test asks for the part it judges."""
        clip = {"x": x, "y": y, "width": width, "height": height, "scale": 1}
        data = self.page("Page.captureScreenshot", format="png", clip=clip)["data"]
        return Image.from_png(base64.b64decode(data))

    def close(self) -> None:
        with contextlib.suppress(RuntimeError, OSError):
            self.call("Browser.close")
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
        os.close(self._to_child)
        os.close(self._from_child)


class Image:
    """Decoded 8-bit RGB(A) pixels of a non-interlaced PNG (what Chromium writes)."""

    def __init__(self, width: int, height: int, channels: int, rows: list[bytes]) -> None:
        self.width, self.height, self.channels, self.rows = width, height, channels, rows

    @classmethod
    def from_png(cls, data: bytes) -> Image:
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
        at, idat, header = 8, b"", b""
        while at < len(data):
            (length,) = struct.unpack(">I", data[at:at + 4])
            kind, body = data[at + 4:at + 8], data[at + 8:at + 8 + length]
            if kind == b"IHDR":
                header = body
            elif kind == b"IDAT":
                idat += body
            at += 12 + length
        width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", header)
        assert depth == 8 and colour in (2, 6) and interlace == 0, (depth, colour, interlace)
        channels = 3 if colour == 2 else 4
        raw = zlib.decompress(idat)
        stride = width * channels
        rows: list[bytes] = []
        previous = bytearray(stride)
        for y in range(height):
            start = y * (stride + 1)
            kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
            for i in range(stride):
                left = line[i - channels] if i >= channels else 0
                up = previous[i]
                corner = previous[i - channels] if i >= channels else 0
                if kind == 1:
                    line[i] = (line[i] + left) & 0xFF
                elif kind == 2:
                    line[i] = (line[i] + up) & 0xFF
                elif kind == 3:
                    line[i] = (line[i] + (left + up) // 2) & 0xFF
                elif kind == 4:
                    p = left + up - corner
                    pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                    pred = left if pa <= pb and pa <= pc else up if pb <= pc else corner
                    line[i] = (line[i] + pred) & 0xFF
            rows.append(bytes(line))
            previous = line
        return cls(width, height, channels, rows)

    def count(self, rgb: tuple[int, int, int], box: tuple[int, int, int, int] | None = None,
              tolerance: int = 3) -> int:
        """Pixels within `tolerance` of `rgb` in `box` (x0, y0, x1, y1), else everywhere."""
        x0, y0, x1, y1 = box or (0, 0, self.width, self.height)
        found = 0
        for y in range(max(0, y0), min(self.height, y1)):
            row = self.rows[y]
            for x in range(max(0, x0), min(self.width, x1)):
                at = x * self.channels
                if all(abs(row[at + c] - rgb[c]) <= tolerance for c in range(3)):
                    found += 1
        return found
