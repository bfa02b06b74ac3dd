"""`swifty-sandbox report`, judged in a real headless Chromium (one browser for the
module, over the DevTools protocol): the timeline renders, the filters change what is
shown (from the URL fragment and by clicking), hostile text stays text, nothing is
fetched, the labels come from the message table in both languages, and a screenshot
shows a deny marker's colour where a deny is, and none when there is none."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from swifty_sandbox import Sandbox
from swifty_sandbox.cli.report import _json_for_script, page
from swifty_sandbox.messages import MESSAGES

from .browser import Browser, find_chromium

# bwrap: the end-to-end test runs real commands; unprivileged: the module runs in the
# unprivileged pass, so Chromium is tried as an ordinary user too
pytestmark = [pytest.mark.bwrap, pytest.mark.unprivileged]

SCRIPT = str(Path(sys.executable).with_name("swifty-sandbox"))
XSS = ("echo '</script><img src=x onerror=\"document.title=`PWNED`\">"
       "<b id=injected>x</b><!--' \u2028 & <svg onload=alert(1)>")
HOSTILE_HOST = "<svg/onload=alert(2)>.evil.example"
DENY_RGB = (0xcf, 0x22, 0x2e)  # report.css: --deny, the marker of a denied entry
ALLOW_RGB = (0x1a, 0x7f, 0x37)  # --allow
MARKERS = (0, 0, 120, Browser.HEIGHT)  # the timeline's left column, where markers sit


def record(effect: str, command: str, *, kind: str = "run", surface: str = "run",
           exit_code: int = 0, **more: object) -> dict[str, object]:
    entry: dict[str, object] = {
        "v": 1, "time": "2026-12-02T01:02:03.456Z", "kind": kind, "surface": surface,
        "project": "/p", "request": {"tool": "Bash", "command": command},
        "decision": {"effect": effect, "reason": f"reason of {command[:20]}",
                     "layer": "sandbox", "category": None, "rule": None}}
    if kind == "run":
        entry |= {"exit_code": exit_code, "duration_ms": 12, "timed_out": False,
                  "truncated": False, "is_error": effect != "allow", "backend": "bwrap"}
    return entry | more


ALLOWED = [
    record("allow", "make test"),
    record("allow", "cp a \u202etxt.exe b\x1b[2J"),
    record("allow", XSS),
    record("allow", "pip install requests", exit_code=1,
           violations=[{"kind": "write", "op": "write", "path": "/home/u/.bashrc",
                        "rule": "protected", "fix": "ask the user"}],
           network=[{"host": HOSTILE_HOST, "port": 443, "allowed": False},
                    {"host": "pypi.org", "port": 443, "allowed": True}]),
]
MIXED = [ALLOWED[0], record("deny", "rm -rf /", exit_code=126), *ALLOWED[1:],
         record("ask", "git push", kind="decision", surface="check")]


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    executable = find_chromium()
    if executable is None:
        if os.environ.get("CI") == "true":
            pytest.fail("chromium not found (.ci/run installs it)")
        pytest.skip("chromium not found")
    chromium = Browser(executable, tmp_path_factory.mktemp("chromium-profile"))
    yield chromium
    chromium.close()


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("report")
    out = {}
    for name, entries in (("mixed", MIXED), ("allowed", ALLOWED)):
        path = folder / f"{name}.html"
        path.write_text(page("/home/u/code/app", entries), encoding="utf-8")
        out[name] = path.as_uri()
    return out


SHOWN = "Array.from(document.querySelectorAll('li.entry'))"


def test_the_timeline_renders_and_hostile_text_stays_text(browser: Browser,
                                                          pages: dict[str, str]) -> None:
    browser.open(pages["mixed"])
    assert browser.evaluate(f"{SHOWN}.length") == len(MIXED)
    commands = browser.evaluate(f"{SHOWN}.map(e => e.querySelector('pre.cmd').textContent)")
    shown = [r["request"]["command"] for r in MIXED]  # type: ignore[index]
    shown[shown.index("cp a \u202etxt.exe b\x1b[2J")] = "cp a \\u202etxt.exe b\\u001b[2J"
    assert commands == shown  # a bidirectional override and an escape made visible
    assert XSS in commands  # exactly as written, U+2028 and all
    # nothing of it became markup, nothing ran, nothing was fetched
    assert browser.evaluate("document.querySelectorAll('img, svg, #injected').length") == 0
    assert browser.evaluate("document.title") == MESSAGES["report.title"][0]
    assert browser.evaluate("performance.getEntriesByType('resource').length") == 0
    hosts = browser.evaluate("Array.from(document.querySelectorAll('ul.net code'))"
                             ".map(c => c.textContent)")
    assert hosts == [f"{HOSTILE_HOST}:443", "pypi.org:443"]
    assert browser.evaluate("document.querySelector('.stats').textContent").startswith("6")


@pytest.mark.parametrize(("fragment", "expected"), [
    ("decision=deny", ["rm -rf /"]),
    ("decision=ask", ["git push"]),
    ("violations=1", ["pip install requests"]),
    ("q=PYPI.ORG", ["pip install requests"]),  # a host, any case
    ("q=reason%20of%20make", ["make test"]),  # the reason's text
    ("decision=allow&q=nothing-like-this", []),
])
def test_filters_from_the_fragment(browser: Browser, pages: dict[str, str], fragment: str,
                                   expected: list[str]) -> None:
    browser.open(f"{pages['mixed']}?{fragment}#{fragment}")  # a query: a fresh document
    shown = browser.evaluate(f"{SHOWN}.map(e => e.querySelector('pre.cmd').textContent)")
    assert shown == expected
    empty = browser.evaluate("document.getElementById('empty').hidden")
    assert empty is bool(expected)


def test_clicking_a_filter_changes_the_timeline_and_the_fragment(
        browser: Browser, pages: dict[str, str]) -> None:
    browser.open(pages["mixed"] + "?click")
    assert browser.evaluate(f"{SHOWN}.length") == len(MIXED)
    browser.evaluate("document.querySelector('button[data-decision=deny]').click()")
    assert browser.evaluate(f"{SHOWN}.length") == 1
    assert browser.evaluate("location.hash") == "#decision=deny"
    browser.evaluate("document.querySelector('button[data-decision=all]').click();"
                     "document.getElementById('only-violations').click()")
    assert browser.evaluate(f"{SHOWN}.length") == 1
    assert browser.evaluate("location.hash") == "#violations=1"


def test_labels_in_both_languages_from_the_message_table(browser: Browser,
                                                         pages: dict[str, str]) -> None:
    buttons = "Array.from(document.querySelectorAll('nav .group button')).map(b => b.textContent)"
    browser.open(pages["mixed"] + "?en")
    assert browser.evaluate(buttons) == [MESSAGES[f"report.{k}"][0]
                                         for k in ("all", "allow", "deny", "ask")]
    browser.open(pages["mixed"] + "?zh#lang=zh")
    assert browser.evaluate(buttons) == [MESSAGES[f"report.{k}"][1]
                                         for k in ("all", "allow", "deny", "ask")]
    assert browser.evaluate("document.documentElement.lang") == "zh"
    assert MESSAGES["report.violations"][1] in browser.evaluate("document.body.textContent")


def test_a_deny_marker_is_seen_where_a_deny_is(browser: Browser,
                                               pages: dict[str, str]) -> None:
    """Judged on pixels: the deny marker's colour in the timeline column of a page with
    a denied command, and nowhere there on one without (whose allow markers show that
    the timeline did render: the absence is not of an empty page)."""
    browser.open(pages["mixed"] + "?shot")
    mixed = browser.screenshot(*MARKERS)
    assert mixed.count(DENY_RGB) >= 150, "no deny marker drawn"  # a 16x16 marker: 256 px
    assert mixed.count(ALLOW_RGB) >= 150
    browser.open(pages["allowed"] + "?shot")
    allowed = browser.screenshot(*MARKERS)
    assert allowed.count(ALLOW_RGB) >= 150, "the timeline did not render"
    assert allowed.count(DENY_RGB) == 0
    browser.open(pages["mixed"] + "?shot2#decision=allow")  # filtered away: gone too
    assert browser.screenshot(*MARKERS).count(DENY_RGB) == 0


def test_the_page_is_self_contained_with_a_strict_policy() -> None:
    html = page("/p", MIXED)
    assert html.count("</script>") == 2  # the data block's end and the script's: no other
    data = re.search(r'<script type="application/json" id="data">(.*?)</script>', html, re.S)
    assert data is not None
    block = data.group(1)
    assert not set("<>&\u2028\u2029") & set(block)
    assert json.loads(block)["records"] == MIXED
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html)
    assert csp is not None
    policy = csp.group(1)
    assert "default-src 'none'" in policy and "unsafe-inline" not in policy
    assert "unsafe-eval" not in policy and "http" not in policy
    markup = html.replace(data.group(0), "")
    assert not re.search(r"\b(src|href)=", markup)  # nothing to fetch
    assert _json_for_script("</script>\u2028") == '"\\u003c/script\\u003e\\u2028"'


def test_report_command_end_to_end(browser: Browser, project: Path, home: Path) -> None:
    box = Sandbox(project, home=home)
    box.run(["sh", "-c", "echo hi"])
    box.run("rm -rf /")
    box.check("git status")
    out = project / "report.html"
    env = {k: v for k, v in os.environ.items() if k != "XDG_STATE_HOME"} | {
        "HOME": str(home)}
    done = subprocess.run([SCRIPT, "report", "--project", str(project), "-o", str(out)],
                          text=True, capture_output=True, env=env, check=False, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "3 records" in done.stderr
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    browser.open(out.as_uri())
    assert browser.evaluate(f"{SHOWN}.map(e => e.className)") == [
        "entry e-allow", "entry e-deny", "entry e-allow"]
    assert browser.evaluate(f"{SHOWN}[1].querySelector('pre.cmd').textContent") == "rm -rf /"
