"""The decision: `Request → Decision`, in the order of SPEC §2 "Decision order".

`load_policy` reads the policy files; `decide` reads only the `Policy` it is given,
the symlinks on the paths it judges, and the program table on first use.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from swifty_sandbox.messages import t

from .agents import project_settings, user_secrets, whole_folders
from .analysis import BashAnalysis, analyse
from .blacklist import check as blacklist_check
from .blacklist import known_values, with_known
from .commands import Invocation
from .files import PolicyFiles
from .paths import Resolved, expand_home, expand_path, is_within, resolve
from .profile import Profile, builtin_profiles, load_profile
from .programs import (
    FlagRule,
    Table,
    Use,
    features,
    flag_matches,
    flag_rule,
    foreign_repository,
    load_table,
    spellings,
)
from .protected import is_policy_pattern, mandatory_protected, session_log_patterns
from .rulefiles import RuleFile, load_rule_layers
from .rules import (
    PathPattern,
    Rule,
    RuleSyntaxError,
    anchor_path_pattern,
    escape_glob,
    last_match_bash,
    last_match_path,
    parse_rule,
    trusted_pattern,
)
from .settings import load_settings
from .shell import Word
from .types import (
    Category,
    Decision,
    Effect,
    Layer,
    Mode,
    Request,
    SandboxMode,
    Settings,
    Tool,
)
from .writes import beyond_roots, written_paths

A, Q, D = Effect.ALLOW, Effect.ASK, Effect.DENY
MODE_TABLE: dict[Mode, dict[Category, Effect]] = {
    Mode.DEFAULT: {Category.READ: A, Category.WRITE: Q, Category.COMMAND: Q},
    Mode.ACCEPT_EDITS: {Category.READ: A, Category.WRITE: A, Category.COMMAND: Q},
    Mode.PLAN: {Category.READ: A, Category.WRITE: Q, Category.COMMAND: Q},
    Mode.BYPASS: {Category.READ: A, Category.WRITE: A, Category.COMMAND: A},
}


@dataclass(frozen=True, slots=True)
class Policy:
    """Everything a decision needs, loaded once; paths are absolute and resolved."""

    project: Path
    home: Path
    settings: Settings
    profile: Profile
    layers: tuple[RuleFile, ...]  # highest priority first: local, project, user
    protected: tuple[PathPattern, ...]
    deny_read: tuple[PathPattern, ...]  # the profile's and settings' unreadable paths
    roots: tuple[str, ...]  # the path sandbox: project, temp dirs, writable roots
    unreadable: PatternLookup  # deny_read, indexed for the per-request check

    @property
    def warnings(self) -> tuple[str, ...]:
        """What a committed file said that was ignored because it would loosen."""
        return (*self.settings.warnings, *(w for f in self.layers for w in f.warnings))

    @property
    def files(self) -> PolicyFiles:
        """Where this policy's files are."""
        return PolicyFiles(self.project, self.home)

    @property
    def programs(self) -> Table:
        """The program table (read on first use: most decisions never need it)."""
        return load_table(self.home)


Identity = tuple[int, int]  # (st_dev, st_ino)


@dataclass(frozen=True, slots=True)
class Host:
    """Facts about this machine a file-tool decision needs, found by the caller (the
    sandbox layer; `policy` probes nothing): what swifty-sandbox runs outside the
    sandbox — where a PATH lookup of what runs by name outside may land (`launchers`:
    the hooks' `swifty-sandbox`, the agents' own `git`, `rg`, `node`, shell),
    the interpreter, this package and bwrap (`trusted` trees) —, the user's agent
    settings where the agents read them (`agent_files`: their config-dir variables
    move them), and `hidden_links`, the identities of hidden files that have other
    hard links (None: they could not be listed), asked only for a file with more than
    one link, and `git_trusts`, whether git would run code from a path or trust it
    (inside a git directory, a gitfile, a hooks directory or an included config file
    the repository's config names)."""

    launchers: tuple[str, ...] = ()
    trusted: tuple[str, ...] = ()
    agent_files: tuple[str, ...] = ()
    hidden_links: Callable[[], frozenset[Identity] | None] = field(
        default=lambda: frozenset())
    git_trusts: Callable[[str], bool] = field(default=lambda path: False)
    # The hidden files and directories a running Landlock command could have moved
    # under another name (`sandbox/landlock/held.py`), by identity.
    held: Callable[[], frozenset[Identity]] = field(default=lambda: frozenset())


# The agents' settings (the agent table; for a folder of them, anything below it: the
# whole `.codex/` and `.gemini/` among them), at
# any depth and in home too (the project's own are in the mandatory list too): whoever
# writes them can remove swifty-sandbox's hooks, or add a hook or MCP server that runs
# outside any sandbox at the agent's next start.
AGENT_SETTINGS_NAMES = tuple("/" + name for name in (*project_settings(), *whole_folders()))
_AGENT_NAMES_FOLDED = tuple(name.lower() for name in AGENT_SETTINGS_NAMES)


class PatternLookup:
    """Patterns a path is tested against on every request: the plain paths (most of a
    long deny-read list) by one dict lookup per ancestor of the path, then the globs."""

    __slots__ = ("globs", "literals")

    def __init__(self, patterns: tuple[PathPattern, ...]) -> None:
        self.literals: dict[str, PathPattern] = {}
        for pattern in patterns:
            if pattern.literal is not None:
                self.literals.setdefault(pattern.literal.rstrip("/"), pattern)
        self.globs = tuple(p for p in patterns if p.literal is None)

    def first(self, path: str) -> PathPattern | None:
        """A pattern that matches `path` (absolute, normalised), or None."""
        if self.literals:
            probe, end = path, len(path)
            while True:  # path, its parent, …, "" (the key of `/`)
                hit = self.literals.get(probe)
                if hit is not None:
                    return hit
                if end <= 0:
                    break
                end = path.rfind("/", 0, end)
                probe = path[:end] if end > 0 else ""
                end = max(end, 0)
        return next((p for p in self.globs if p.matches(path)), None)


def _default_temp_dir() -> str:
    """The directory `tempfile.gettempdir()` picks, chosen as it chooses (TMPDIR, TEMP,
    TMP, /tmp, /var/tmp, /usr/tmp, else the working directory: the first that is a
    directory we may write in) but without writing a probe file into each: on a busy
    disk that create and unlink took milliseconds of every call. A process that set
    `tempfile.tempdir` keeps its choice."""
    if tempfile.tempdir is not None:
        return tempfile.tempdir
    names = [os.environ.get(name) for name in ("TMPDIR", "TEMP", "TMP")]
    for folder in (*(n for n in names if n), "/tmp", "/var/tmp", "/usr/tmp"):
        path = os.path.abspath(folder)
        if os.path.isdir(path) and os.access(path, os.W_OK | os.X_OK):
            return path
    return os.getcwd()


def temp_dirs() -> tuple[Path, ...]:
    """The system temp dirs (`/tmp`, `/var/tmp`, `$TMPDIR`), resolved, without repeats."""
    candidates = [Path("/tmp"), Path("/var/tmp"), Path(_default_temp_dir())]
    if os.environ.get("TMPDIR"):
        candidates.append(Path(os.environ["TMPDIR"]))
    resolved = dict.fromkeys(Path(os.path.realpath(p)) for p in candidates)
    return tuple(resolved)


# What user lookups read (the C library's configuration and its files): while each has
# the identity it had, uid 0's entry is the one found then.
_USER_DB = ("/etc/nsswitch.conf", "/etc/passwd")
_SUPERUSER: list[tuple[tuple[object, ...], str | None]] = []


def _superuser_home() -> str | None:
    """uid 0's home, resolved (None: no such user). A lookup costs milliseconds (the
    C library tries nscd's socket, reads the files): kept per process while
    nsswitch.conf and /etc/passwd keep their identity (device, inode, size, mtime,
    ctime), and looked up again when either changed. A source other than the files
    (nsswitch naming another for `passwd`) is looked up every time."""
    identity: list[object] = []
    for path in _USER_DB:
        try:
            info = os.stat(path)
        except OSError:
            identity.append(None)
            continue
        identity.append((info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns,
                         info.st_ctime_ns))
    key = tuple(identity)
    if _SUPERUSER and _SUPERUSER[0][0] == key:
        return _SUPERUSER[0][1]
    import pwd

    try:
        found: str | None = os.path.realpath(pwd.getpwuid(0).pw_dir)
    except KeyError:
        found = None
    if _files_only():
        _SUPERUSER[:] = [(key, found)]
    return found


def _files_only() -> bool:
    """Whether nsswitch.conf names only `files` (and `systemd`, which serves uid 0
    from a built-in record) for `passwd`: what the identities above cover."""
    try:
        with open(_USER_DB[0], encoding="utf-8", errors="replace") as f:
            lines = f.read(1 << 16).splitlines()
    except OSError:
        return True  # glibc's default without the file: files
    for line in lines:
        name, _, sources = line.partition("#")[0].partition(":")
        if name.strip() == "passwd":
            return all(word in ("files", "systemd") or word.startswith("[")
                       for word in sources.split())
    return True


def _root_home(home: Path, deny_read: tuple[str, ...]) -> tuple[str, ...]:
    """The home-relative entries (`~/.ssh`, histories, …) again under root's home when
    that is not the home in use: run as root with another HOME (`sudo -E`, a container
    user's HOME), the superuser's keys are as secret as the user's. Not all of /root:
    the project or a writable root may lie in it, and its toolchains stay usable."""
    root_home = _superuser_home()
    if root_home is None or root_home == str(home) or root_home == "/":
        return ()
    return tuple(root_home + entry[1:] for entry in deny_read if entry.startswith("~/"))


def prepare_builtin(home: Path) -> None:
    """Make ahead what a policy load makes of the built-in profiles for this home and
    any project (their patterns, `rules.trusted_pattern`): the warm server calls it
    before it serves, so its workers find them made. Reads no policy file."""
    home = Path(os.path.realpath(home))
    for name in builtin_profiles():
        profile = load_profile(name, Path("/"))
        for pattern in (*profile.protected, *mandatory_protected(), *profile.deny_read,
                        *_root_home(home, profile.deny_read)):
            anchored = anchor_path_pattern(pattern, Path("/nonexistent/a"), home)
            if anchored == anchor_path_pattern(pattern, Path("/nonexistent/b"), home):
                trusted_pattern(pattern, anchored)  # not the project's: the same for all


def load_policy(project: Path, home: Path | None = None) -> Policy:
    """Load settings, profile and the three rule layers; raises `PolicyFileError`."""
    project = Path(os.path.realpath(project))
    home = Path(os.path.realpath(home if home is not None else Path.home()))
    files = PolicyFiles(project, home)
    settings = load_settings(files)
    profile = load_profile(settings.profile, project)
    layers = load_rule_layers(files)
    # Profile entries first, mandatory ones last: no earlier entry can shadow them.
    def compiled(patterns: tuple[str, ...]) -> tuple[PathPattern, ...]:
        # The profile's and mandatory patterns: trusted data, compiled on first use.
        return tuple(trusted_pattern(p, anchor_path_pattern(p, project, home))
                     for p in patterns)

    protected = compiled((*profile.protected, *mandatory_protected(None, home, project)))
    # The session log is hidden as well as protected (policy/protected.py says why); so
    # are the agents' credentials, where each agent reads them (the agent table).
    deny_read = compiled((*profile.deny_read, *settings.deny_read,
                          *_root_home(home, profile.deny_read), *session_log_patterns(),
                          *user_secrets(os.environ, home)))
    roots = dict.fromkeys(str(p) for p in (project, *temp_dirs(), *settings.writable))
    return Policy(project, home, settings, profile, layers, protected, deny_read,
                  tuple(roots), PatternLookup(deny_read))


# -- the decision ----------------------------------------------------------------------

def decide(
    policy: Policy,
    request: Request,
    mode: Mode | None = None,
    sandbox_mode: SandboxMode | None = None,
    host: Host | None = None,
) -> Decision:
    """The decision on one request, in SPEC §2's order: the blacklist (and protected
    paths a command writes), protected and unreadable paths, the rules of the three
    layers (a deny anywhere wins), the path sandbox, the mode table, the sandbox's
    auto-allow; the first step with an answer decides.

    `mode` and `sandbox_mode` override the settings' (the command-line options); `host`
    is what this machine runs outside the sandbox (`Host`). What the analysis could not
    see into is at least `ask`, never allowed by a rule. A file request is decided on
    where the kernel will open it (`Decision.target`). Never raises for a well-formed
    `Request`; reads nothing but `policy`, the symlinks and file types on the paths it
    judges, and the program table on first use.
    """
    if request.tool is Tool.BASH:
        return _decide(policy, request, mode, sandbox_mode, None, host or Host())
    found = locate(policy, request.path or "")
    decision = _decide(policy, request, mode, sandbox_mode, found, host or Host())
    if request.tool is Tool.EDIT_FILE and decision.effect is not D:
        # An edit reads the file as well: its old text comes back to the model (the
        # agent's diff, an occurrence count), so what may not be read may not be edited.
        read = _decide(policy, replace(request, tool=Tool.READ_FILE), mode, sandbox_mode,
                       found, host or Host())
        if read.effect.severity > decision.effect.severity:
            decision = read
    return replace(decision, target=found.path)


def _decide(policy: Policy, request: Request, mode: Mode | None,
            sandbox_mode: SandboxMode | None, found: Resolved | None, host: Host
            ) -> Decision:
    mode = mode or policy.settings.default_mode
    sandbox_mode = sandbox_mode or policy.settings.sandbox_mode
    category = request.tool.category

    # 1. Dangerous-command blacklist, in every mode.
    analysis: BashAnalysis | None = None
    if request.tool is Tool.BASH:
        analysis = analyse(request)
        match = blacklist_check(list(analysis.invocations), str(policy.home), policy.roots)
        if match is not None:
            return Decision(D, match.reason, Layer.BLACKLIST, category=match.category)
        hit = _redirect_hit(policy, analysis)
        if hit is not None:
            return hit
    # 2. Protected paths (writes), and the paths the sandbox makes unreadable (reads):
    #    the agent's file tools see what its commands see.
    paths: tuple[str, ...] = ()
    if found is not None:
        paths = (*found.spellings, found.path)
        hit = _file_hit(policy, category, found, host)
        if hit is not None:
            return hit

    # 3. Rules.
    caveat: Caveat | None = None  # why an allow rule did not cover the command
    if analysis is not None:
        rule, opaque, caveat = _bash_verdict(policy, analysis)
    else:
        assert found is not None
        rule, opaque = _path_verdict(policy, request.tool, paths, found.opened), None
    if rule is not None and rule.effect is D:
        return _rule_decision(rule)
    if opaque is not None:
        # Never allowed on the strength of rules that could not see the whole command.
        return Decision(Q, t("decision.unanalysable", why=opaque), Layer.ANALYSIS)
    if rule is not None and rule.effect is Q:
        return _bypass(mode, _rule_decision(rule))
    if rule is not None:  # an explicit allow
        if mode is Mode.PLAN and category is not Category.READ:
            capped = Decision(Q, t("decision.plan_cap", category=_category_word(category),
                                   rule=rule.text, file=rule.file, line=rule.line),
                              Layer.MODE, rule=rule.ref)
            return _sandbox(request, sandbox_mode, capped)
        return _rule_decision(rule)

    # 4. Path sandbox for file tools.
    # Both readings an agent may open (where the kernel lands, and `..` collapsed) must
    # lie in a root: an agent that normalises the path opens the lexical one.
    outside = next((p for p in (found.opened if found is not None else ())
                    if not any(is_within(p, root) for root in policy.roots)), None)
    if outside is not None:
        return _bypass(mode, Decision(Q, t("decision.path_outside", path=outside),
                                      Layer.PATH))

    # 5. Mode table, then 6. sandbox auto-allow.
    effect = MODE_TABLE[mode][category]
    reason = caveat.reason() if caveat is not None and effect is Q \
        else _mode_reason(effect, category, mode)
    decision = Decision(effect, reason, Layer.MODE)
    return _sandbox(request, sandbox_mode, decision)


def locate(policy: Policy, path: str) -> Resolved:
    """A request's path (`~`, `~/x` in the policy's home, relative to the project; not
    `~user`, which names a file `~user` as the kernel sees it) as the kernel resolves it."""
    return resolve(os.path.join(policy.project, expand_home(path, policy.home)))


def candidate_paths(policy: Policy, path: str) -> tuple[str, ...]:
    """Every name of the path — as written (absolute, normalised), after each link on
    the way — and, last, where the kernel lands (`locate`).

    Deny and ask rules are checked on all, the most restrictive verdict wins: a deny on
    `.env` must catch a symlink to it, and a deny on `*.key` must catch the link named
    `x.key` too. Allow rules and the path sandbox judge the last, the one opened:
    `a/b/../x` with `a/b -> ../..` is not `a/x`, and a write through a dangling symlink
    lands at its target.
    """
    found = locate(policy, path)
    return (*found.spellings, found.path)


_GIT_NAME = re.compile(r"/\.git(?:/|$)")
_KINDS = ((stat.S_ISFIFO, "FIFO"), (stat.S_ISSOCK, "socket"),
          (stat.S_ISCHR, "character device"), (stat.S_ISBLK, "block device"))


def _file_hit(policy: Policy, category: Category, found: Resolved, host: Host
              ) -> Decision | None:
    """SPEC §2 step 2 for a file tool, which runs outside the sandbox on the host: a path
    the kernel cannot be seen to resolve, or resolves through /proc; a FIFO, socket or
    device; for a write, protected paths (the mandatory list and the profile's), agents'
    settings at any depth, what swifty-sandbox runs outside, a file with other hard
    links; for a read, what the sandbox hides and the other names of a hidden file."""
    path = found.path
    if found.error is not None:
        return Decision(D, t("decision.path_unresolved", path=path, error=found.error),
                        Layer.PROTECTED, category="path")
    if found.proc:
        return Decision(D, t("decision.path_proc", path=found.spellings[0] if
                             found.spellings else path), Layer.PROTECTED, category="path")
    try:
        info: os.stat_result | None = os.lstat(path)
    except OSError:
        info = None  # missing (a write creates it); anything else fails at the open
    if info is not None:
        kind = next((name for test, name in _KINDS if test(info.st_mode)), None)
        if kind is not None:
            return Decision(D, t("decision.path_special", path=path, kind=kind),
                            Layer.PROTECTED, category="path")
    paths = (*found.spellings, path)
    if category is Category.WRITE:
        for spelling in paths:
            # Case folded: on a case-insensitive file system (macOS by default)
            # `.Claude/Settings.json` is the agent's file.
            folded = spelling.lower()
            if folded.endswith(_AGENT_NAMES_FOLDED) or spelling in host.agent_files \
                    or any(name + "/" in folded for name in _AGENT_NAMES_FOLDED):
                return Decision(D, t("decision.agent_settings", path=spelling),
                                Layer.PROTECTED, category="protected-path")
            # A launcher is a file, or a directory of scripts (what a script the
            # agents' settings run loads beside it): anything below it too.
            if any(is_within(spelling, tree) for tree in (*host.launchers, *host.trusted)):
                return Decision(D, t("decision.runs_outside", path=spelling),
                                Layer.PROTECTED, category="protected-path")
        hit = _protected_hit(policy, paths)
        if hit is not None:
            return hit
        # What the sandbox hides it also keeps from being written (an empty mount), and
        # much of it runs or authenticates on the host (`~/.ssh/config`'s ProxyCommand
        # and `authorized_keys`, `~/.aws/config`'s credential_process, kubeconfig's
        # exec): the file tools write no more of it than commands can.
        hit = _unreadable_hit(policy, paths, write=True)
        if hit is not None:
            return hit
        # What git executes or trusts (a `.git` entry or anything in one, at any depth,
        # case folded; a bare repository, a hooks directory, an included config): run by
        # the user's next git command, outside the sandbox, which keeps it read-only to
        # commands for the same reason.
        git = next((s for s in paths if _GIT_NAME.search(s.lower()) or host.git_trusts(s)),
                   None)
        if git is not None:
            return Decision(D, t("decision.git_trusts", path=git), Layer.PROTECTED,
                            category="protected-path")
        if info is not None and stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
            return Decision(D, t("decision.hard_link_write", path=path,
                                 count=info.st_nlink), Layer.PROTECTED, category="hard-link")
        return None
    hit = _unreadable_hit(policy, paths)
    if hit is not None:
        return hit
    if info is not None and _held_here(path, info, host):
        return Decision(D, t("decision.hidden_moved", path=path), Layer.PROTECTED,
                        category="deny-read")
    if info is not None and stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
        linked = host.hidden_links()
        if linked is None or (info.st_dev, info.st_ino) in linked:
            return Decision(D, t("decision.hard_link_hidden", path=path), Layer.PROTECTED,
                            category="deny-read")
    return None


def _held_here(path: str, info: os.stat_result, host: Host) -> bool:
    """Whether `path`, or a directory it lies in, is a hidden path a running command
    moved here (`Host.held`: asked only while such a run lasts)."""
    held = host.held()
    if not held:
        return False
    if (info.st_dev, info.st_ino) in held:
        return True
    parent = os.path.dirname(path)
    while True:
        with contextlib.suppress(OSError):
            up = os.stat(parent)
            if (up.st_dev, up.st_ino) in held:
                return True
        if parent == os.path.dirname(parent):
            return False
        parent = os.path.dirname(parent)


def _first_match(patterns: tuple[PathPattern, ...], paths: tuple[str, ...]
                 ) -> tuple[str, PathPattern] | None:
    return next(((path, p) for path in paths for p in patterns if p.matches(path)), None)


def _protected_hit(policy: Policy, paths: tuple[str, ...]) -> Decision | None:
    hit = _first_match(policy.protected, paths)
    if hit is None:
        return None
    path, pattern = hit
    what = t("word.policy_file") if is_policy_pattern(pattern.text) \
        else t("word.profile_protected")
    return Decision(D, t("decision.protected", path=path, what=what), Layer.PROTECTED,
                    category="protected-path")


def _unreadable_hit(policy: Policy, paths: tuple[str, ...], *, write: bool = False
                    ) -> Decision | None:
    hit = next(((path, p) for path in paths
                if (p := policy.unreadable.first(path)) is not None), None)
    if hit is None:
        return None
    path, pattern = hit
    reason = t("decision.hidden_write", path=path, pattern=pattern.text) if write \
        else t("decision.unreadable", path=path, pattern=pattern.text)
    return Decision(D, reason, Layer.PROTECTED, category="deny-read")


def _severest(rules: list[Rule | None]) -> Rule | None:
    found = [r for r in rules if r is not None]
    return max(found, key=lambda r: r.effect.severity) if found else None


def _combine_layers(verdicts: list[Rule | None]) -> Rule | None:
    """SPEC §2 precedence: a deny in any file wins; else the highest-priority verdict —
    except that the committed project file's allow does not lift an ask of the user's
    own file: the repository's author must not approve what the user wants to see."""
    for verdict in verdicts:
        if verdict is not None and verdict.effect is D:
            return verdict
    first = next((v for v in verdicts if v is not None), None)
    _local, project, user = verdicts  # the order of `load_rule_layers`
    if first is project and project is not None and project.effect is A and \
            user is not None and user.effect is Q:
        return user
    return first


def _path_verdict(policy: Policy, tool: Tool, paths: tuple[str, ...],
                  opened: tuple[str, ...] = ()) -> Rule | None:
    """Each layer's verdict: deny or ask if any name of the path is denied or asked;
    allow only if every reading that may be opened (`opened`, else the last name) is."""
    verdicts: list[Rule | None] = []
    for layer in policy.layers:
        rules = layer.reversed_by_tool[tool]
        matches = [last_match_path(rules, p) for p in paths]
        strict = _severest([m for m in matches if m is not None and m.effect is not A])
        allows = [last_match_path(rules, p) for p in opened] if opened else matches[-1:]
        allow = allows[-1] if all(m is not None for m in allows) else None
        verdicts.append(strict or allow)
    return _combine_layers(verdicts)


def _command_verdict(policy: Policy, forms: list[str],
                     argvs: tuple[tuple[Word, ...], ...] = (), table: Table | None = None
                     ) -> Rule | None:
    """One command: deny or ask if any of its written forms is denied or asked (also a
    flag rule in another spelling: `Bash(rm -rf *)` catches `rm -r -f x`, given
    `argvs`); allow only if the command really run (the innermost form) is allowed."""
    verdicts: list[Rule | None] = []
    for layer in policy.layers:
        rules = layer.reversed_by_tool[Tool.BASH]
        matches = [last_match_bash(rules, form) for form in forms]
        if table is not None and (flagged := _flag_rules(table, rules)):
            matches.append(next((r for r, spec in flagged if any(
                flag_matches(table, spec, argv) for argv in argvs)), None))
        strict = _severest([m for m in matches if m is not None and m.effect is not A])
        verdicts.append(strict or matches[len(forms) - 1])
    return _combine_layers(verdicts)


_FLAGGED: dict[int, tuple[tuple[Rule, ...], list[tuple[Rule, FlagRule]]]] = {}


def _flag_rules(table: Table, rules: tuple[Rule, ...]) -> list[tuple[Rule, FlagRule]]:
    """A file's deny/ask rules with flags of a program in the table, last first
    (remembered per loaded rule file: most files have none)."""
    known = _FLAGGED.get(id(rules))
    if known is None or known[0] is not rules:
        if len(_FLAGGED) > 64:
            _FLAGGED.clear()
        found = [(r, spec) for r in rules if r.effect is not A and r.bash is not None
                 and (spec := flag_rule(table, r.bash.text)) is not None]
        known = _FLAGGED[id(rules)] = (rules, found)
    return known[1]


def _bash_verdict(policy: Policy, analysis: BashAnalysis
                  ) -> tuple[Rule | None, str | None, Caveat | None]:
    """The rule verdict over every command that may run, what could not be seen, and
    why an allow rule did not cover a command (its program's features)."""
    forms = analysis.rule_forms()
    table = policy.programs if _strict_bash_rules(policy) else None
    if table is not None:
        # Deny and ask rules also see the base name and git without global options.
        computed = any(inv.program is None for inv in analysis.invocations)
        known = known_values(list(analysis.invocations)) if computed else {}
        for index, inv in enumerate(analysis.invocations):
            extra = [s for form in inv.forms for s in spellings(table, form)]
            if known and inv.program is None:  # `r=rm; $r x` is also `rm x`
                extra.extend(" ".join(w.shown for w in v.argv) for v in with_known(inv, known))
            if extra:
                forms[index] = [*forms[index][:-1], *extra, forms[index][-1]]
    if table is not None:
        verdicts = [_command_verdict(policy, texts, inv.forms, table)
                    for texts, inv in zip(forms, analysis.invocations, strict=True)]
    else:
        verdicts = [_command_verdict(policy, texts) for texts in forms]
    strict = _severest([v for v in verdicts if v is not None and v.effect is not A])
    if strict is not None or analysis.opaque is not None:
        return strict, analysis.opaque, None
    if not verdicts:
        return None, None, None
    caveat = None
    for index, (verdict, inv) in enumerate(zip(verdicts, analysis.invocations, strict=True)):
        if verdict is not None and (why := _not_covered(
                table or policy.programs, inv, verdict, policy.roots, str(policy.home))) \
                is not None:
            caveat, verdicts[index] = caveat or why, None
    # A compound command is allowed by rules only if every part of it is.
    return (verdicts[0] if all(v is not None for v in verdicts) else None), None, caveat


_STRICT: dict[int, tuple[tuple[RuleFile, ...], bool]] = {}


def _strict_bash_rules(policy: Policy) -> bool:
    """Whether any layer has a Bash deny or ask rule (remembered per loaded policy)."""
    layers = policy.layers
    known = _STRICT.get(id(layers))
    if known is None or known[0] is not layers:
        if len(_STRICT) > 64:
            _STRICT.clear()
        known = _STRICT[id(layers)] = (layers, any(
            r.effect is not A for layer in layers for r in layer.reversed_by_tool[Tool.BASH]))
    return known[1]


def _not_covered(table: Table, inv: Invocation, rule: Rule, roots: tuple[str, ...],
                 home: str) -> Caveat | None:
    """Why the allow `rule` does not cover `inv`: a feature beyond its program's
    ordinary behaviour that the rule's pattern does not name; None when it covers it."""
    named = rule.bash.text.replace("\\*", "*") if rule.bash is not None else ""
    foreign = foreign_repository(inv, roots[0]) or beyond_roots(table, inv, roots, home)
    for use in (*features(table, inv), *((foreign,) if foreign else ())):
        # Named as used (`-c core.pager=less`), or with any value (`-c *`, `--output=*`).
        spellings = [re.escape(use.shown)]
        if use.option:
            spellings.append(re.escape(use.option) + r"(?: |=)\*")
        if use.does in ("env", "computed") or not re.search(
                rf"(?:^|\s)(?:{'|'.join(spellings)})(?:\s|$|\*)", named):
            return Caveat(use, rule)
    return None


@dataclass(frozen=True, slots=True)
class Caveat:
    """An allow rule that did not cover a command, and the feature why."""

    use: Use
    rule: Rule

    def reason(self) -> str:
        use, rule = self.use, self.rule
        return t("decision.not_covered", program=use.program, feature=use.shown,
                 does=t(f"does.{use.does}"), rule=rule.text, file=rule.file, line=rule.line)


def _redirect_hit(policy: Policy, analysis: BashAnalysis) -> Decision | None:
    """`echo x > .swifty/config.yaml`, `cd .git && tee -a config`: what a command writes
    is checked like a WriteFile request."""
    for target in written_paths(analysis, policy.programs, str(policy.project),
                                str(policy.home)):
        paths = candidate_paths(policy, target)
        hit = _protected_hit(policy, paths)
        if hit is not None:
            return hit
        rule = _path_verdict(policy, Tool.WRITE_FILE, paths)
        if rule is not None and rule.effect is D:
            return _rule_decision(rule)
    return None


# -- reasons and the late steps ------------------------------------------------------------

_EFFECT_WORDS = {A: "word.allowed", Q: "word.ask", D: "word.denied"}


def _effect_word(effect: Effect) -> str:
    return t(_EFFECT_WORDS[effect])


def _category_word(category: Category) -> str:
    return t(f"word.{category.value}")


def _rule_decision(rule: Rule) -> Decision:
    reason = t("decision.rule", effect_word=_effect_word(rule.effect), rule=rule.text,
               file=rule.file, line=rule.line)
    return Decision(rule.effect, reason, Layer.RULE, rule=rule.ref)


def _mode_reason(effect: Effect, category: Category, mode: Mode) -> str:
    verb = t("word.verb_allow") if effect is A else t("word.verb_ask")
    return t("decision.mode", effect_word=_effect_word(effect), category=category.value,
             mode=mode.value, verb=verb)


def _bypass(mode: Mode, decision: Decision) -> Decision:
    """bypassPermissions turns an ask into an allow (never a deny into anything)."""
    if mode is Mode.BYPASS and decision.effect is Q:
        return Decision(A, t("decision.bypass", why=decision.reason), decision.layer,
                        decision.category, decision.rule)
    return decision


def _sandbox(request: Request, sandbox_mode: SandboxMode, decision: Decision) -> Decision:
    """SPEC §2 step 6: a Bash ask that no rule made is allowed when it runs confined."""
    if (decision.effect is Q and request.tool is Tool.BASH
            and sandbox_mode is SandboxMode.AUTO):
        return Decision(A, t("decision.sandbox_auto"), Layer.SANDBOX)
    return decision


def suggest_rules(policy: Policy, request: Request) -> list[str]:
    """The rules an "always allow" answer writes: exact, never wider than the request."""
    if request.tool is Tool.BASH:
        analysis = analyse(request)
        if analysis.opaque is not None:
            return []  # nothing exact can be written for what could not be seen
        texts = dict.fromkeys(forms[-1].replace("*", "\\*") for forms in analysis.rule_forms())
        return [f"Bash({text})" for text in texts]
    path = candidate_paths(policy, request.path or "")[-1]
    relative = os.path.relpath(path, policy.project)
    # A pattern without `/` would match the name at any depth: keep it anchored.
    shown = relative if is_within(path, str(policy.project)) and "/" in relative else path
    return [f"{request.tool.value}({escape_glob(shown)})"]


def always_allows(policy: Policy, request: Request, mode: Mode | None = None,
                  sandbox_mode: SandboxMode | None = None, host: Host | None = None
                  ) -> bool:
    """Whether "always" can keep its word for this request: decided again with the
    rules it would write (`suggest_rules`) at the end of the local layer, it is allowed.
    Not for what no rule lifts — a command the analysis could not see into, plan mode's
    cap, a write outside the roots an allow does not cover —, so no surface offers a
    choice that would write a rule and ask again next time."""
    texts = suggest_rules(policy, request)
    if not texts or not policy.layers:
        return False
    local = policy.layers[0]  # highest priority first: local
    try:
        added = tuple(parse_rule(text, Effect.ALLOW, file=str(local.path), line=0, column=0,
                                 project=policy.project, home=policy.home)
                      for text in texts)
    except RuleSyntaxError:
        return False  # the writer would refuse it too
    trial = replace(policy, layers=(
        RuleFile.of(local.scope, local.path, (*local.rules, *added), local.warnings),
        *policy.layers[1:]))
    return decide(trial, request, mode, sandbox_mode, host).effect is Effect.ALLOW


__all__ = ["AGENT_SETTINGS_NAMES", "MODE_TABLE", "Host", "Policy", "always_allows",
           "candidate_paths", "decide", "expand_path", "load_policy", "locate",
           "suggest_rules", "temp_dirs"]
