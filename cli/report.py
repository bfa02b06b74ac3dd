"""`swifty-sandbox report`: the session log as one self-contained HTML page.

Everything in a record may come from a hostile repository (command strings, paths,
hosts, rule text), so the page never puts it into markup: the records travel as JSON
in a `<script type="application/json">` block with `<`, `>`, `&` and U+2028/9 escaped
(no text can close the block), and the page's script renders them with `textContent`
only. A strict Content-Security-Policy allows exactly the page's own script and style
(by hash) and nothing else: no network, no images, no inline handlers.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import tempfile
import time
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path

import click

from swifty_sandbox.messages import MESSAGES, language, t
from swifty_sandbox.sandbox.agents import sessionlog

from .common import project_option, reports_errors
from .log import project_log, since_option
from .texts import command, option

_LABELS = tuple(key.removeprefix("report.") for key in MESSAGES if key.startswith("report."))
MAX_RECORDS = 20000  # the newest; a page of a whole rotated log stays a few MiB


def _json_for_script(value: object) -> str:
    """JSON that cannot end the script block it sits in, nor be read as markup."""
    text = json.dumps(value, ensure_ascii=True, separators=(",", ":"))
    return (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def _hash(source: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(source.encode()).digest()).decode() + "'"


def _asset(name: str) -> str:
    return (resources.files(__package__ or "swifty_sandbox.cli") / name).read_text("utf-8")


def page(project: str, entries: Sequence[Mapping[str, object]]) -> str:
    """The whole page (pure: the records and the project in, HTML out). Its script and
    style are `report.js` and `report.css` beside this module, inlined."""
    script, style = _asset("report.js"), _asset("report.css")
    labels = {lang: {name: MESSAGES[f"report.{name}"][i] for name in _LABELS}
              for i, lang in enumerate(("en", "zh"))}
    lang = "zh" if language() else "en"
    data = {"project": project, "generated": sessionlog.stamp_of(time.time()),
            "lang": lang, "labels": labels, "records": list(entries[-MAX_RECORDS:])}
    csp = (f"default-src 'none'; script-src {_hash(script)}; style-src {_hash(style)}; "
           "img-src 'none'; font-src 'none'; connect-src 'none'; base-uri 'none'; "
           "form-action 'none'")
    title = MESSAGES["report.title"][1 if language() else 0]
    return (
        "<!DOCTYPE html>\n<html lang=\"" + lang + "\">\n<head>\n<meta charset=\"utf-8\">\n"
        f"<meta http-equiv=\"Content-Security-Policy\" content=\"{csp}\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        "<meta name=\"referrer\" content=\"no-referrer\">\n"
        f"<title>{title}</title>\n<style>{style}</style>\n</head>\n<body>\n"
        "<header id=\"top\"></header>\n<nav id=\"controls\"></nav>\n"
        "<main><ol id=\"timeline\"></ol><p id=\"empty\" hidden></p></main>\n"
        f"<script type=\"application/json\" id=\"data\">{_json_for_script(data)}</script>\n"
        f"<script>{script}</script>\n</body>\n</html>\n")


def _write(path: Path, text: str) -> None:
    """Atomically: a reader never sees half a page, an old page is replaced whole."""
    directory = path.parent if str(path.parent) else Path(".")
    fd, temp = tempfile.mkstemp(prefix=".report-", suffix=".html", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(temp, 0o600)  # the page holds the commands run here: the user's only
        os.replace(temp, path)
    except BaseException:
        os.unlink(temp)
        raise


@command("report", help="help.report")
@project_option
@since_option
@option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path),
        default=Path("swifty-sandbox-report.html"), show_default=True,
        help="help.report.output", metavar="help.meta.file")
@reports_errors
def report_command(project: Path | None, since: float | None, output: Path) -> None:
    """`report` (its help: `help.report`)."""
    root, path = project_log(project)
    entries = list(sessionlog.read(path, since))
    _write(output, page(str(root), entries))
    click.echo(t("report.written", path=output, count=len(entries)), err=True)
