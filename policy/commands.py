"""From a parsed script to the commands that will really run.

Wrappers (sudo, env, timeout, nice, nohup, xargs, exec, …) are unwrapped; shells given a
string (`bash -c '…'`, `eval '…'`, a heredoc or here-string fed to a shell, `echo … |
sh`) and `find -exec` are parsed and followed. Each result is an `Invocation`: the
argv that runs, every form it was written in (for rules: deny/ask on any form, allow
only on the innermost), and the simple command it came from.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from .shell import MAX_DEPTH, Script, Simple, Word, ansi_c, parse

# Wrapper → its options that take a separate value.
WRAPPERS: dict[str, frozenset[str]] = {
    "sudo": frozenset({"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T", "-R",
                       "--user", "--group", "--chdir", "--prompt", "--close-from",
                       "--other-user", "--role", "--type", "--command-timeout", "--host",
                       "--chroot"}),
    "doas": frozenset({"-u", "-C"}),
    "runuser": frozenset({"-u", "-g", "-G", "--user", "--group", "--supp-group", "-w",
                          "--whitelist-environment"}),
    "env": frozenset({"-u", "-C", "--unset", "--chdir", "-a", "--argv0"}),
    "command": frozenset(),
    "builtin": frozenset(),
    "exec": frozenset({"-a"}),
    "nohup": frozenset(),
    "nice": frozenset({"-n", "--adjustment"}),
    "ionice": frozenset({"-c", "-n", "-p", "-P", "-u", "--class", "--classdata"}),
    "chrt": frozenset(),
    "timeout": frozenset({"-s", "-k", "--signal", "--kill-after"}),
    "time": frozenset({"-f", "-o", "--format", "--output"}),
    "stdbuf": frozenset({"-i", "-o", "-e", "--input", "--output", "--error"}),
    # `-i`, `-l`, `-e` (and `--replace`, `--max-lines`, `--eof`) take an *optional*
    # attached value: `xargs -i rm {}` runs `rm`.
    "xargs": frozenset({"-a", "-d", "-E", "-I", "-L", "-n", "-P", "-s",
                        "--arg-file", "--delimiter", "--max-args", "--max-procs",
                        "--max-chars", "--process-slot-var"}),
    "watch": frozenset({"-n", "-d", "--interval", "--differences"}),
    "unbuffer": frozenset(),
    "setsid": frozenset(),
    # `ssh-agent [options] command`: runs the command as its child.
    "ssh-agent": frozenset({"-a", "-E", "-O", "-P", "-t"}),
    "flock": frozenset({"-w", "-E", "--timeout", "--conflict-exit-code"}),
    "strace": frozenset({"-o", "-e", "-p", "-s", "-u", "-a", "-b", "-E", "-I", "-O", "-P",
                         "-S", "-U", "-X"}),
    "ltrace": frozenset({"-o", "-e", "-p", "-s", "-u", "-a", "-A", "-D", "-F", "-l", "-n",
                         "-w", "-x", "-L"}),
    "taskset": frozenset(),
    "unshare": frozenset({"-S", "-G", "-R", "-w", "--setuid", "--setgid", "--root", "--wd",
                          "--map-user", "--map-group", "--map-users", "--map-groups",
                          "--propagation"}),
    "nsenter": frozenset({"-t", "-S", "-G", "-r", "-w", "--target", "--setuid", "--setgid"}),
    "chroot": frozenset({"--userspec", "--groups"}),
    "setpriv": frozenset({"--reuid", "--regid", "--groups", "--inh-caps", "--ambient-caps",
                          "--bounding-set", "--securebits", "--selinux-label",
                          "--apparmor-profile", "--pdeathsig"}),
    "coproc": frozenset(),
    "fakeroot": frozenset({"-l", "-s", "-i", "--lib", "--faked"}),
    "pkexec": frozenset({"--user"}),
    "caffeinate": frozenset({"-t", "-w"}),
    "parallel": frozenset({"-j", "-S", "-a", "-d", "-I", "-N", "-n", "-E", "-P", "--jobs",
                           "--arg-file", "--delimiter", "--colsep", "--sshlogin",
                           "--max-args", "--timeout", "--joblog", "--results", "--tmpdir",
                           "--retries", "--load", "--delay", "--basefile", "--workdir"}),
    # More that run their arguments as a command (red team: `setarch x86_64 rm -rf ~`).
    "setarch": frozenset(),  # `setarch ARCH [options] cmd`: see _OPERAND_FIRST
    "linux32": frozenset(), "linux64": frozenset(), "i386": frozenset(),
    "x86_64": frozenset(), "uname26": frozenset(),
    "numactl": frozenset({"-C", "-N", "-m", "-p", "-i", "-P", "-w", "--physcpubind",
                          "--cpunodebind", "--membind", "--preferred", "--interleave",
                          "--preferred-many", "--weighted-interleave"}),
    "prlimit": frozenset({"-p", "--pid", "-o", "--output"}),
    "catchsegv": frozenset(),
    "eatmydata": frozenset(),
    "dbus-run-session": frozenset({"--config-file", "--dbus-daemon"}),
    "xvfb-run": frozenset({"-n", "--server-num", "-s", "--server-args", "-f", "--auth-file",
                           "-e", "--error-file", "-p", "--xauth-protocol", "-w", "--wait"}),
    "torsocks": frozenset({"-u", "-p", "-a", "-P", "--user", "--pass", "--address",
                           "--port"}),
    "proxychains": frozenset({"-f"}),
    "proxychains4": frozenset({"-f"}),
    "firejail": frozenset(),
    "valgrind": frozenset(),
    "systemd-run": frozenset({"-u", "--unit", "-p", "--property", "-E", "--setenv",
                              "--description", "--slice", "-M", "--machine", "-H", "--host",
                              "--uid", "--gid", "--nice", "-D", "--working-directory"}),
}
# Wrappers whose first word is an operand, before their options: `setarch ARCH -R cmd`.
_OPERAND_FIRST = frozenset({"setarch"})
# Options whose value may only be attached (`xargs -i{}`): never the next word.
_OPTIONAL_ATTACHED: dict[str, frozenset[str]] = {"xargs": frozenset("ile")}
# Wrappers whose first operand is not the command: `timeout 5 cmd`, `flock FILE cmd`,
# `taskset MASK cmd`, `chroot DIR cmd`.
_LEADING_OPERAND = frozenset({"timeout", "flock", "chrt", "taskset", "chroot"})
# Programs that run a shell string given to an option: `flock f -c '…'`, `script -c
# '…'`, `su -c '…'`; the string is followed as `sh -c '…'`.
_COMMAND_OPTION: dict[str, frozenset[str]] = {
    "flock": frozenset({"-c", "--command"}),
    "script": frozenset({"-c", "--command"}),
    "su": frozenset({"-c", "--command", "--session-command"}),
    "runuser": frozenset({"-c", "--command", "--session-command"}),
    "sg": frozenset({"-c"}),
    "npx": frozenset({"-c", "--call"}),
    "nix-shell": frozenset({"--run", "--command"}),
}
# Multi-call binaries: `busybox rm …`, `toybox rm …` run the applet.
_MULTICALL = frozenset({"busybox", "toybox"})
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "busybox",
                    "toybox", "yash", "posh", "rbash"})
# Programs that run code given as text: the shells and the language interpreters. The
# one list (the blacklist's pipe-to-interpreter, the audit's risky grants).
INTERPRETERS = frozenset({*SHELLS, "python", "python2", "python3", "perl", "ruby", "node",
                          "nodejs", "php", "lua", "tclsh", "pwsh", "osascript", "deno",
                          "bun", "Rscript"})
# Options that give an interpreter (not a shell) its code on the command line.
_CODE_FLAGS = frozenset({"-c", "-e", "-m", "-E", "--eval", "--command", "-r", "-p"})
# A script operand that is stdin itself.
_STDIN_FILES = frozenset({"/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"})
# `via` of a command xargs runs with arguments read from static text (all of them known);
# a plain "xargs" in `via` means more arguments come from its input at run time.
STATIC_XARGS = "xargs<<"
_FD_EXEC = frozenset({"-x", "--exec", "-X", "--exec-batch"})
_SHELL_SYNTAX = re.compile(r"[\s;&|<>()$`\\'\"*?\[{~#]")
# Programs that may run an argument as a shell command.
_SHELL_ARGUMENTS = frozenset({"tmux", "screen", "xterm", "gnome-terminal", "konsole"})
_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})


@dataclass(frozen=True, slots=True)
class Invocation:
    argv: tuple[Word, ...]  # what runs, after unwrapping
    forms: tuple[tuple[Word, ...], ...]  # as written first, then each unwrapped form
    simple: Simple  # the simple command it came from (redirects, pipeline)
    script: Script  # the script holding `simple`
    via: tuple[str, ...] = ()  # wrappers, shells and finds it was reached through

    @property
    def program(self) -> str | None:
        """The program's base name; None when it is only known at run time."""
        value = self.argv[0].value if self.argv else None
        return value.rsplit("/", 1)[-1] if value is not None else None

    @property
    def args(self) -> list[str]:
        return [w.shown for w in self.argv[1:]]


def name(word: Word) -> str | None:
    return word.value.rsplit("/", 1)[-1] if word.value is not None else None


def reads_code_from_stdin(program: str, args: list[str]) -> bool:
    """Whether `program args…` runs code it reads from stdin: an interpreter given no
    code on its command line (`-c`, `-e`, …) and no script file, or told to read it
    there (`-`, `/dev/stdin`, a shell's `-s`). The one definition for the analysis
    (text piped or here-documented into a shell is followed) and the blacklist
    (`curl … | sh`). `args` are the words as written."""
    if program in _MULTICALL:  # `busybox sh …`
        if not args or args[0].rsplit("/", 1)[-1] not in SHELLS:
            return False
        program, args = args[0].rsplit("/", 1)[-1], args[1:]
    if program not in INTERPRETERS:
        return False
    shell = program in SHELLS
    from_stdin = False  # a shell's `-s`: operands are its arguments, not a script
    index = 0
    while index < len(args):
        value = args[index]
        if value == "--" or (shell and value == "-"):  # the end of the options
            rest = args[index + 1:]
            return from_stdin or not rest or rest[0] in _STDIN_FILES
        if value == "-" or value in _STDIN_FILES:
            return True
        if value in _SHELL_VALUED if shell else value in ("-W", "-X"):
            index += 2  # `bash -o pipefail`, `python3 -W ignore`: the value too
            continue
        short = value.startswith("-") and not value.startswith("--")
        if shell and short:
            if "c" in value[1:]:
                return False  # the code is the `-c` argument
            from_stdin = from_stdin or "s" in value[1:]
        elif not shell and (value in _CODE_FLAGS or value.startswith(
                ("--eval", "--print", "--command")) or (short and value[1:2] in "cmeEpr")):
            return False  # code or a module given on the command line (`-mjson.tool`)
        if not value.startswith(("-", "+") if shell else "-"):
            return from_stdin  # a script file (with `-s`: the first argument)
        index += 1
    return True


def invocations(script: Script, depth: int = 0) -> Iterator[Invocation]:
    """Every command the script may run, unwrapped, nested scripts followed."""
    simples = list(script.walk())
    aliases = _aliases(simples)
    for simple in simples:
        if simple.words:
            words = _brace_expanded(simple.words)
            forms = (simple.words,) if words is simple.words else (simple.words, words)
            yield from _unwrap(simple, script, words, forms, (), depth)
            alias = aliases.get(simple.words[0].value or "") if aliases else None
            if alias is not None:  # `alias g=git; g push`: both readings may run
                rest = [w.value for w in simple.words[1:]]
                if all(v is not None for v in rest):
                    text = " ".join([alias, *(v for v in rest if v is not None)])
                    yield from _follow(text, simple, script, ("alias",), depth)
    yield from _piped_text(simples, script, depth)


def _aliases(simples: list[Simple]) -> dict[str, str]:
    """`alias NAME=VALUE` definitions with static values, anywhere in the script."""
    found: dict[str, str] = {}
    for simple in simples:
        if simple.words and simple.words[0].value == "alias":
            for word in simple.words[1:]:
                if word.value and "=" in word.value:
                    key, value = word.value.split("=", 1)
                    found[key] = value
    return found


_BRACES = re.compile(r"\{([^{}]*)\}")
_SEQUENCE = re.compile(r"-?\w+\.\.-?\w+(?:\.\.-?\d+)?")


def _brace_expanded(words: tuple[Word, ...]) -> tuple[Word, ...]:
    """Brace expansion of unquoted literal words (`{rm,-rf,/}` is `rm -rf /`); the
    words themselves when there is none."""
    if not any("{" in w.text and w.value is not None for w in words):
        return words
    out: list[Word] = []
    changed = False
    for word in words:
        expanded = _expand_braces(word.text) if (
            word.value is not None and "{" in word.text
            and not any(c in word.text for c in "'\"\\$`")) else None
        if expanded is None or expanded == [word.text]:
            out.append(word)
            continue
        changed = True
        out.extend(Word(part, part) for part in expanded if part)
    return tuple(out) if changed else words


def _expand_braces(text: str, budget: int = 64) -> list[str] | None:
    """Bash's brace expansion of one literal word, innermost braces first; None when
    it would make more than `budget` words."""
    m = _BRACES.search(text)
    while m is not None and "," not in m.group(1) and not _SEQUENCE.fullmatch(m.group(1)):
        m = _BRACES.search(text, m.end())
    if m is None:
        return [text]
    inner = m.group(1)
    if "," in inner:
        choices = inner.split(",")
    else:
        a, b = inner.split("..")[:2]
        if re.fullmatch(r"-?\d+", a) and re.fullmatch(r"-?\d+", b):
            lo, hi = int(a), int(b)
            if abs(hi - lo) >= budget:
                return None
            step = 1 if hi >= lo else -1
            choices = [str(n) for n in range(lo, hi + step, step)]
        elif len(a) == 1 and len(b) == 1:
            step = 1 if ord(b) >= ord(a) else -1
            choices = [chr(c) for c in range(ord(a), ord(b) + step, step)]
        else:
            return [text]
    results: list[str] = []
    for choice in choices:
        rest = _expand_braces(text[:m.start()] + choice + text[m.end():], budget)
        if rest is None or len(results) + len(rest) > budget:
            return None
        results.extend(rest)
    return results


def _unwrap(simple: Simple, script: Script, argv: tuple[Word, ...],
            forms: tuple[tuple[Word, ...], ...], via: tuple[str, ...],
            depth: int) -> Iterator[Invocation]:
    while (inner := peel(argv)) is not None:
        forms = (*forms, inner)
        via = (*via, name(argv[0]) or "")
        argv = inner
    program = name(argv[0]) if argv else None
    yield Invocation(argv, forms, simple, script, via)
    inner = _runner_command(program, argv)
    if inner is not None:
        # `uv run rm -rf ~`: what it runs meets the blacklist and deny rules too; an
        # allow still matches the command as written (`Bash(uv run pytest *)`), its
        # last form.
        for found in _unwrap(simple, script, inner, (inner,), (*via, program or ""), depth):
            yield Invocation(found.argv, (*found.forms, argv), found.simple, found.script,
                             found.via)
    if program is not None and (program in SHELLS or program == "eval"):
        yield from _shell_strings(simple, script, argv, program, via, depth)
    elif program == "trap":
        yield from _follow(_trap_action(argv), simple, script, (*via, "trap"), depth)
    elif program == "git":
        for text in _git_shell_aliases(argv):  # `git -c alias.x='!rm -rf y' x`
            yield from _follow(text, simple, script, (*via, "git"), depth)
        for text in _git_commands(argv):  # `git rebase --exec 'rm x'`, `bisect run rm x`
            yield from _follow(text, simple, script, (*via, "git"), depth)
    if program in _NAME_ARGUMENTS:
        yield from _subscripts(simple, script, argv, (*via, program), depth)
    elif program in ("find", "fd", "fdfind"):
        for command in _find_exec(argv, _FIND_EXEC if program == "find" else _FD_EXEC):
            yield from _unwrap(simple, script, command, (command,), (*via, program), depth)
    elif program in _SHELL_ARGUMENTS:
        # `tmux new 'rm x'`, `xterm -e 'rm x'`: an argument may be a shell command.
        for word in argv[1:]:
            if word.value and " " in word.value:
                yield from _follow(word.value, simple, script, (*via, program), depth)
    elif program in ("source", ".") and len(argv) > 1:
        # `. <(echo 'rm x')`, `source /dev/stdin <<< 'rm x'`: the script is text too.
        yield from _operand_code(simple, script, argv, argv[1], (*via, program), depth)
    elif argv and "/" in (argv[0].value or ""):  # `./s.sh` the command itself wrote
        yield from _written_script(simple, script, argv, argv[0], (*via, "exec"), depth)


def peel(argv: tuple[Word, ...]) -> tuple[Word, ...] | None:
    """One wrapper removed: what `sudo …`, `env -S '…'`, `busybox rm …`, … run; None
    when `argv` is not a wrapper (or wraps nothing)."""
    program = name(argv[0]) if argv else None
    if program is None:
        return None
    if program == "command" and len(argv) > 1 and argv[1].value in ("-v", "-V"):
        return None  # `command -v x` looks x up, it does not run it
    if program == "env":
        split = _env_split(argv)
        if split is not None:
            return split
    if program in _COMMAND_OPTION:
        args = argv[1:]
        if program == "flock":  # `flock [options] FILE -c '…'`: options end at FILE
            stripped = _strip_options("flock", list(args))
            args = tuple(stripped[:2]) if stripped and stripped[0].shown.startswith("-") \
                else ()
        string = _option_value(args, _COMMAND_OPTION[program])
        if string is not None:  # `flock f -c 'rm x'` runs `sh -c 'rm x'`
            return (Word("sh", "sh"), Word("-c", "-c"), string)
        if program not in ("flock", "runuser"):
            return None
    if program == "coproc":
        rest = list(argv[1:])
        if len(rest) > 1 and rest[1].value in ("{", "("):
            rest = rest[2:]  # `coproc NAME { cmd; }`
        elif rest and rest[0].value in ("{", "("):
            rest = rest[1:]
        return tuple(rest) or None
    if program == "parallel":
        return _parallel(argv)
    if program == "watch":  # joins its arguments and runs them with `sh -c`
        rest = _strip_options("watch", list(argv[1:]))
        values = [w.value for w in rest]
        if rest and all(v is not None for v in values) and not any(
                w.shown in ("-x", "--exec") for w in argv[1:]) and any(
                _SHELL_SYNTAX.search(v or "") for v in values):
            text = " ".join(v for v in values if v is not None)
            return (Word("sh", "sh"), Word("-c", "-c"), Word(text, text))
        return tuple(rest) or None
    if program in ("sudo", "doas") and _runs_shell(program, argv):
        # `sudo -i 'rm x'`: the arguments are joined and run by the target user's shell.
        rest = _strip_options(program, list(argv[1:]))
        values = [w.value for w in rest]
        if rest and all(v is not None for v in values):
            text = " ".join(v for v in values if v is not None)
            return (Word("sh", "sh"), Word("-c", "-c"), Word(text, text))
    if program == "xargs":
        return _xargs_command(argv)
    if program in WRAPPERS:
        first = 2 if program in _OPERAND_FIRST else 1
        return tuple(_strip_options(program, list(argv[first:]))) or None
    if program in _MULTICALL and len(argv) > 1 and name(argv[1]) not in SHELLS:
        return argv[1:]  # `busybox rm -rf /` runs the applet `rm`
    return None


def xargs_replace(argv: tuple[Word, ...]) -> str | None:
    """The string xargs replaces with each input line (`-I R`, `-IR`, `-i[R]`,
    `--replace[=R]`; `{}` by default), None when it appends its input instead."""
    for index, word in enumerate(argv[1:], start=1):
        value = word.shown
        if value == "--" or not value.startswith("-"):
            return None
        if value == "-I":
            following = argv[index + 1].value if index + 1 < len(argv) else None
            return following or None
        if value.startswith("-I"):
            return value[2:]
        if value.startswith("-i"):
            return value[2:] or "{}"
        if value == "--replace" or value.startswith("--replace="):
            return value.partition("=")[2] or "{}"
    return None


def _xargs_command(argv: tuple[Word, ...]) -> tuple[Word, ...] | None:
    """The command xargs runs. With a replace string, a shell or `eval` given it in
    its code (`xargs -I{} sh -c '{}'`) runs its input as code: that word is known only
    at run time."""
    command = tuple(_strip_options("xargs", list(argv[1:])))
    replace = xargs_replace(argv)
    inner = innermost(command) if command else ()
    if replace and inner and (name(inner[0]) in SHELLS or name(inner[0]) == "eval"):
        command = tuple(Word(w.text, None) if replace in (w.value or "") and w is not
                        inner[0] else w for w in command)
    return command or None


def _runs_shell(program: str, argv: tuple[Word, ...]) -> bool:
    """`sudo -i …`, `sudo -u bob -s …`: the command is run by a shell."""
    valued = WRAPPERS[program]
    index = 1
    while index < len(argv) and argv[index].shown.startswith("-") and argv[index].shown != "--":
        option = argv[index].shown
        if option in ("--shell", "--login") or (
                not option.startswith("--") and ("s" in option or "i" in option)):
            return True
        index += 2 if option in valued else 1
    return False


def _env_split(argv: tuple[Word, ...]) -> tuple[Word, ...] | None:
    """`env -S 'rm -rf /'`, `env --split-string='…'`, `env -iS'…'`: the string split
    into words, still under `env` (it may hold assignments and options)."""
    for index, word in enumerate(argv[1:], start=1):
        value = word.shown
        if value == "--" or not value.startswith("-"):
            return None
        split: str | None
        if value in ("-S", "--split-string"):
            if index + 1 >= len(argv):
                return None
            split, rest = argv[index + 1].value, argv[index + 2:]
        elif value.startswith("--split-string="):
            split, rest = value.split("=", 1)[1], argv[index + 1:]
        elif not value.startswith("--") and "S" in value:
            attached = value[value.index("S") + 1:]
            if attached:
                split, rest = attached, argv[index + 1:]
            elif index + 1 < len(argv):
                split, rest = argv[index + 1].value, argv[index + 2:]
            else:
                return None
        else:
            continue
        if split is None:
            return None
        return (argv[0], *(Word(part, part) for part in split.split()), *rest)
    return None


def _option_value(args: tuple[Word, ...], options: frozenset[str]) -> Word | None:
    """The value of the first of `options` (`-c X`, `-cX`, `--command=X`)."""
    for index, word in enumerate(args):
        value = word.shown
        if value == "--":
            return None
        for option in options:
            if value == option:
                return args[index + 1] if index + 1 < len(args) else None
            if option.startswith("--") and value.startswith(option + "="):
                text = value[len(option) + 1:]
                return Word(text, text)
            if (not option.startswith("--") and value.startswith("-")
                    and not value.startswith("--") and option[1] in value[1:]):
                attached = value[value.index(option[1], 1) + 1:]
                if attached:
                    return Word(attached, attached)
                return args[index + 1] if index + 1 < len(args) else None
    return None


def _parallel(argv: tuple[Word, ...]) -> tuple[Word, ...] | None:
    """GNU parallel runs its command template (or, without one, each argument) through
    a shell: followed as `sh -c '…'`."""
    rest = _strip_options("parallel", list(argv[1:]))
    separators = (":::", "::::", ":::+", "::::+")
    stop = next((i for i, w in enumerate(rest) if w.shown in separators), len(rest))
    template, arguments = rest[:stop], [w for w in rest[stop:] if w.shown not in separators]
    words = template or arguments
    values = [w.value for w in words]
    if not words or any(v is None for v in values):
        return tuple(template) or None
    if template:
        values += [w.value for w in arguments if w.value is not None]
    text = (" " if template else "\n").join(v for v in values if v is not None)
    return (Word("sh", "sh"), Word("-c", "-c"), Word(text, text))


def innermost(argv: tuple[Word, ...]) -> tuple[Word, ...]:
    """The command the wrappers finally run."""
    while (inner := peel(argv)) is not None:
        argv = inner
    return argv


def _strip_options(program: str, rest: list[Word]) -> list[Word]:
    valued = WRAPPERS[program]
    optional = _OPTIONAL_ATTACHED.get(program, frozenset())
    while rest and (rest[0].shown.startswith("-") and rest[0].shown != "-"):
        option = rest.pop(0).shown
        if option == "--":
            break
        if option.startswith("--") or len(option) == 2:
            if option in valued and rest and "=" not in option:
                rest.pop(0)
            continue
        # A cluster of short options (`sudo -Eu root`): a valued letter takes the rest
        # of the cluster, or the next word when it is last.
        for index, letter in enumerate(option[1:], start=1):
            if letter in optional:
                break
            if "-" + letter in valued:
                if index == len(option) - 1 and rest:
                    rest.pop(0)
                break
    if program == "env":
        while rest and "=" in rest[0].shown and not rest[0].shown.startswith("="):
            rest.pop(0)
    if program in ("sudo", "doas") and rest and "=" in rest[0].shown:
        while rest and "=" in rest[0].shown:
            rest.pop(0)
    if program in _LEADING_OPERAND and rest:
        rest.pop(0)
    return rest


# Tools that run a command given after a subcommand: program → subcommand → its options
# that take a separate value (`uv run --with x cmd`); after `--` the command follows.
_RUNNERS: dict[str, dict[str, frozenset[str]]] = {
    "uv": {"run": frozenset({"--with", "--python", "-p", "--from", "--project",
                             "--directory", "--env-file", "--extra", "--group",
                             "--package", "--index", "--with-requirements", "-w"})},
    "poetry": {"run": frozenset({"-C", "--directory", "-P", "--project"})},
    "pipenv": {"run": frozenset()}, "pdm": {"run": frozenset()},
    "rye": {"run": frozenset()}, "pixi": {"run": frozenset({"-e", "--environment"})},
    "conda": {"run": frozenset({"-n", "--name", "-p", "--prefix", "--cwd"})},
    "bundle": {"exec": frozenset({"--gemfile"})},
    "yarn": {"exec": frozenset()}, "pnpm": {"exec": frozenset({"-C", "--dir"})},
    "npm": {"exec": frozenset({"-c", "--call", "-w", "--workspace"})},
    "mise": {"exec": frozenset({"-C", "--cd"}), "x": frozenset({"-C", "--cd"})},
    "asdf": {"exec": frozenset()},
    "direnv": {"exec": frozenset()},  # `direnv exec DIR cmd`
    "doppler": {"run": frozenset({"-p", "--project", "-c", "--config", "--command"})},
    "op": {"run": frozenset({"--env-file", "--account"})},
    "aws-vault": {"exec": frozenset({"-d", "--duration", "--region", "-t", "--mfa-token"})},
    "devbox": {"run": frozenset({"-c", "--config"})},
    "perf": {"record": frozenset({"-o", "--output", "-e", "--event", "-p", "--pid"}),
             "stat": frozenset({"-o", "--output", "-e", "--event", "-p", "--pid"})},
    # Its `-c STRING` is a shell string (below); every option that takes a value is
    # here, or `run --backend bwrap rm -rf ~` would read as the program `bwrap`.
    "swifty-sandbox": {"run": frozenset({"--project", "--mode", "--sandbox", "--timeout",
                                         "--max-processes", "--max-memory", "--backend",
                                         "--allow-net"})},
}
# Runners whose first operand is not the command: `direnv exec DIR`, `aws-vault exec
# PROFILE`, `mise exec TOOL@VERSION -- cmd` (its command comes after `--`).
_RUNNER_OPERAND = frozenset({"direnv", "aws-vault"})


def _runner_command(program: str | None, argv: tuple[Word, ...]) -> tuple[Word, ...] | None:
    """The command a runner (`uv run`, `bundle exec`, …) runs, None for anything else."""
    subcommands = _RUNNERS.get(program or "")
    if subcommands is None or len(argv) < 3 or argv[1].value not in subcommands:
        return None
    rest = list(argv[2:])
    dashes = next((i for i, w in enumerate(rest) if w.shown == "--"), None)
    if dashes is not None:
        return tuple(rest[dashes + 1:]) or None
    if program == "mise":
        return None  # its operands are tools until `--`
    valued = subcommands[argv[1].value or ""]
    while rest and rest[0].shown.startswith("-"):
        word = rest.pop(0)
        option = word.shown
        if program == "swifty-sandbox" and option.startswith("-c") \
                and not option.startswith("--"):
            # `swifty-sandbox run -c STRING` runs STRING with `bash -c` (it is what the
            # hooks' rewrite writes): read as one, not as a program named STRING, which
            # hid `run -c 'a; rm -rf ~'` from the deny rules and the blacklist.
            string = rest[0] if option == "-c" and rest else None if option == "-c" else \
                Word(word.text[2:], word.value[2:] if word.value is not None else None,
                     word.subs)
            return None if string is None else (Word("bash", "bash"), Word("-c", "-c"),
                                                string)
        if option in valued and rest:
            rest.pop(0)
    if program in _RUNNER_OPERAND and rest:
        rest.pop(0)
    return tuple(rest) or None


def _follow(text: str | None, simple: Simple, script: Script, via: tuple[str, ...],
            depth: int) -> Iterator[Invocation]:
    """Parse a string a shell will run and yield its invocations."""
    if text is None or depth >= MAX_DEPTH:
        return
    inner = parse(text, depth + 1)
    for invocation in invocations(inner, depth + 1):
        yield Invocation(invocation.argv, invocation.forms, invocation.simple,
                         invocation.script, (*via, *invocation.via))


def _shell_strings(simple: Simple, script: Script, argv: tuple[Word, ...], program: str,
                   via: tuple[str, ...], depth: int) -> Iterator[Invocation]:
    """The code a shell or `eval` runs from text: `-c STRING`, a script given as a
    process substitution or `/dev/stdin`, a heredoc or here-string. Text known before
    run time is followed; text made at run time (`eval "$x"`, `bash -c "$(cmd)"`, `sh
    <(cmd)`) is code no rule has seen, and makes the command opaque."""
    if program == "eval":
        codes = [_code_text(w) for w in argv[1:]]
        unknown = next((w for w, c in zip(argv[1:], codes, strict=True) if c is None), None)
        if unknown is not None:
            yield _run_time_code(simple, argv, unknown, via)
            return
        text = " ".join(c for c in codes if c)
        yield from _follow(text, simple, script, (*via, "eval"), depth)
        return
    args = list(argv[1:])
    shell = program
    if program in _MULTICALL:
        if not args or name(args[0]) not in SHELLS:
            return
        shell, args = name(args[0]) or program, args[1:]
    index = 0
    inline = False  # a `-c` seen: options may still follow it (`bash -c -- '…'`,
    while index < len(args):  # `sh -c -e '…'`); the first operand is the code
        value = args[index].shown
        if value in ("--", "-"):
            index += value == "--" or inline
            break
        if value.startswith("-") and not value.startswith("--") and "c" in value[1:]:
            inline = True
            index += 1
            continue
        if value in _SHELL_VALUED:  # `bash -o pipefail -c '…'`: skip the value too
            index += 2
            continue
        if not value.startswith(("-", "+")):
            break  # a script file (its content is not ours to see), or `-s` arguments
        index += 1
    if inline:
        if index < len(args):
            code = _code_text(args[index])
            if code is None:
                yield _run_time_code(simple, argv, args[index], via)
            else:
                yield from _follow(code, simple, script, (*via, program), depth)
        return
    if reads_code_from_stdin(shell, [w.shown for w in args]):
        yield from _input_code(simple, script, argv, "0", (*via, program), depth)
    elif index < len(args):
        yield from _operand_code(simple, script, argv, args[index], (*via, program), depth)


_WHOLE_SUBSTITUTION = re.compile(r'"?(?:\$\(.*\)|`.*`|<\(.*\))"?', re.DOTALL)
_FD_FILE = re.compile(r"/(?:dev/fd|proc/self/fd)/(\d+)")


def _code_text(word: Word) -> str | None:
    """The code a word hands a shell, when it is known before run time: its value, or
    the static output of the one substitution it is (`sh -c "$(echo 'rm x')"`)."""
    text = _home_text(word)
    if text is not None:
        return text
    if len(word.subs) == 1 and _WHOLE_SUBSTITUTION.fullmatch(word.text):
        return static_output(word.subs[0])
    return None


def _run_time_code(simple: Simple, argv: tuple[Word, ...], word: Word,
                   via: tuple[str, ...]) -> Invocation:
    """The command again, marked as running code only known at run time: no rule can
    allow it (`analysis.opaque`), whatever allowed its program."""
    return Invocation(argv, (argv,), simple, Script(error=_snippet(word.text)), via)


def _snippet(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 40 else text[:39] + "…"


def _operand_code(simple: Simple, script: Script, argv: tuple[Word, ...], word: Word,
                  via: tuple[str, ...], depth: int) -> Iterator[Invocation]:
    """A script operand that is text: `<(…)` (its static output, else run-time code),
    `/dev/stdin` or `/dev/fd/N` (what is redirected there). A file is not ours to see."""
    if word.text.startswith("<(") and len(word.subs) == 1:
        code = static_output(word.subs[0])
        if code is None:
            yield _run_time_code(simple, argv, word, via)
        else:
            yield from _follow(code, simple, script, via, depth)
        return
    value = word.value or ""
    m = _FD_FILE.fullmatch(value)
    if m is not None and m.group(1) != "0" and not any(
            r.fd == m.group(1) for r in simple.redirects):
        # `exec 3< <(cmd); bash /dev/fd/3`: a descriptor opened elsewhere holds text
        # this command cannot see.
        yield _run_time_code(simple, argv, word, via)
    elif value in _STDIN_FILES or m is not None:
        yield from _input_code(simple, script, argv, m.group(1) if m else "0", via, depth)
    elif value:
        yield from _written_script(simple, script, argv, word, via, depth)


def _written_script(simple: Simple, script: Script, argv: tuple[Word, ...], word: Word,
                    via: tuple[str, ...], depth: int) -> Iterator[Invocation]:
    """A script file the same command wrote (`printf 'rm x' > s.sh; bash s.sh`, `cat >
    s.sh <<EOF … EOF; ./s.sh`): its static text is followed; text a program made at
    run time (`gen > s.sh; sh s.sh`) is code no rule has seen."""
    path = (word.value or "").removeprefix("./")
    texts: list[str | None] = []
    for other in script.walk():
        for redirect in other.redirects:
            target = redirect.target.value if redirect.target is not None else None
            if redirect.writes and target is not None and target.removeprefix("./") == path:
                if redirect.op != ">>":
                    texts.clear()  # flow-insensitive: every write may be the one
                texts.append(_fed_text(other) if other.words else "")
    if not texts:
        return
    if any(t is None for t in texts):
        yield _run_time_code(simple, argv, word, via)
    else:
        yield from _follow("\n".join(t for t in texts if t), simple, script, via, depth)


def _input_code(simple: Simple, script: Script, argv: tuple[Word, ...], fd: str,
                via: tuple[str, ...], depth: int) -> Iterator[Invocation]:
    """The code on one input descriptor: a heredoc or here-string, a file (not ours to
    see) or a process substitution `< <(…)` (its static output, else run-time code).
    (A pipe into it is followed by `_piped_text`.)"""
    for redirect in simple.redirects:
        if (redirect.fd or "0") != fd:
            continue
        if redirect.op in ("<<", "<<-") and redirect.body is not None:
            yield from _follow(redirect.body, simple, script, via, depth)
        elif redirect.op == "<<<" and redirect.target is not None:
            code = _code_text(redirect.target)
            if code is None:
                yield _run_time_code(simple, argv, redirect.target, via)
            else:
                yield from _follow(code, simple, script, via, depth)
        elif redirect.op in ("<", "<>") and redirect.target is not None \
                and redirect.target.text.startswith("<("):
            yield from _operand_code(simple, script, argv, redirect.target, via, depth)


# Shell options that take the next word as their value.
_SHELL_VALUED = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})


# Builtins that evaluate a variable name given as text — and with it the arithmetic of
# an array subscript: `printf -v 'a[$(cmd)]' x` runs cmd.
_NAME_ARGUMENTS = frozenset({"printf", "declare", "typeset", "local", "export", "readonly",
                             "test", "[", "read", "unset", "let", "mapfile", "readarray",
                             "wait", "getopts", "shift", "return", "exit", "ulimit"})
_SUBSCRIPT = re.compile(r"\[(.*(?:\$\(|`).*)\]", re.DOTALL)


def _subscripts(simple: Simple, script: Script, argv: tuple[Word, ...], via: tuple[str, ...],
                depth: int) -> Iterator[Invocation]:
    """The commands in subscripts of names given as text (`test -v 'a[$(cmd)]'`)."""
    for word in argv[1:]:
        m = _SUBSCRIPT.search(word.value or "")
        if m is None or depth >= MAX_DEPTH:
            continue
        inner = parse(": " + m.group(1), depth + 1)
        for sub in inner.walk():
            if sub is not inner.commands[0] and sub.words:
                yield from _unwrap(sub, inner, sub.words, (sub.words,), via, depth + 1)
        if inner.error:
            yield Invocation(argv, (argv,), simple, inner, via)


_GIT_SHELL_ALIAS = re.compile(r"alias\.[^=]+=\s*!(.*)", re.DOTALL | re.IGNORECASE)


def _git_shell_aliases(argv: tuple[Word, ...]) -> list[str]:
    """The shell commands of `!` aliases defined inline (`-c alias.x='!cmd'`)."""
    found = []
    for index, word in enumerate(argv[1:], start=1):
        value = word.value or ""
        if value == "-c" and index + 1 < len(argv):
            value = argv[index + 1].value or ""
        elif value.startswith("-c"):
            value = value[2:]
        else:
            continue
        m = _GIT_SHELL_ALIAS.match(value)
        if m is not None:
            found.append(m.group(1))
    return found


_GIT_STRING_OPTIONS = frozenset({"--exec", "-x", "--extcmd", "--tree-filter",
                                 "--index-filter", "--msg-filter", "--env-filter",
                                 "--commit-filter", "--parent-filter", "--tag-name-filter",
                                 "--subdirectory-filter", "--upload-pack", "--receive-pack"})


def _git_commands(argv: tuple[Word, ...]) -> list[str]:
    """Shell commands git runs from its arguments: `rebase --exec S`, `difftool -x S`,
    `filter-branch --tree-filter S`, `bisect run CMD…`, `submodule foreach CMD…`."""
    values = [w.value for w in argv[1:]]
    start = 0
    while start < len(values) and (values[start] or "").startswith("-"):
        start += 2 if values[start] in ("-C", "-c", "--git-dir", "--work-tree",
                                        "--namespace", "--config-env") else 1
    sub = values[start] if start < len(values) else None
    found: list[str] = []
    for index, value in enumerate(values):
        if value is None:
            continue
        name, eq, attached = value.partition("=")
        if name == "-x" and sub not in ("rebase", "difftool"):
            continue  # `cherry-pick -x` records the origin
        if name in _GIT_STRING_OPTIONS:
            text = attached if eq else (values[index + 1] if index + 1 < len(values) else None)
            if text:
                found.append(text)
        elif value in ("run", "foreach") and index > 0 and values[index - 1] in (
                "bisect", "submodule", "--recursive", "--quiet", "-q"):
            rest = [v for v in values[index + 1:] if v is not None]
            while value == "foreach" and rest and rest[0].startswith("-"):
                rest.pop(0)  # `--recursive`, `--quiet`
            if rest:
                found.append(" ".join(rest))
    return found


def _trap_action(argv: tuple[Word, ...]) -> str | None:
    """The command string of `trap 'cmd' SIGNAL…` (None for `trap -p`, `trap - SIG`)."""
    args = list(argv[1:])
    if args and args[0].value == "--":
        args = args[1:]
    if len(args) < 2 or args[0].value in ("-", "-p", "-l", "-P"):
        return None
    return args[0].value


_HOME_ONLY = re.compile(r"\$HOME\b|\$\{HOME\}")


def _home_text(word: Word) -> str | None:
    """A string's value; for one whose only expansion is `$HOME` (`eval "rm -rf $HOME"`),
    its text with `$HOME` left in, for the inner parse to see as such."""
    if word.value is not None:
        return word.value
    text = word.text
    if len(text) > 1 and text[0] == text[-1] == '"':
        text = text[1:-1]
    rest = _HOME_ONLY.sub("", text)
    return text if ("$HOME" in text or "${HOME}" in text) and not any(
        c in rest for c in "$`\"'") else None


def _find_exec(argv: tuple[Word, ...], actions: frozenset[str]
               ) -> Iterator[tuple[Word, ...]]:
    words = list(argv)
    for index, word in enumerate(words):
        if word.value in actions:
            command: list[Word] = []
            for following in words[index + 1:]:
                if following.value in (";", "+", "\\;"):
                    break
                command.append(following)
            if command:
                yield tuple(command)


_ECHO_OPTIONS = re.compile(r"-[neE]+")
_PRINTF_DIRECTIVE = re.compile(r"%(?:%|[-+ #0]*\d*(?:\.\d*)?([sbqdiouxXcfgeEaA])?)")


def _fed_text(feeder: Simple) -> str | None:
    """The static text a command writes to its output: `echo`/`printf` with known
    arguments, the heredoc or here-string `cat` passes on, or `cat` of process
    substitutions whose output is static; None otherwise."""
    if not feeder.words:
        return None
    program = name(feeder.words[0])
    values = [w.value for w in feeder.words[1:]]
    if program == "echo":
        options = 0
        while options < len(values) and _ECHO_OPTIONS.fullmatch(values[options] or ""):
            options += 1  # only leading `-n`, `-e`, `-E`: `echo git push --force` prints all
        rest = values[options:]
        if any(v is None for v in rest):
            return None
        text = " ".join(v for v in rest if v is not None)
        if any("e" in (v or "") for v in values[:options]):
            return ansi_c(text)  # `echo -e 'rm -rf \\x2f'` prints `rm -rf /`
        return text.replace("\\n", "\n")
    if program == "printf":
        if values[:1] == ["--"]:
            values = values[1:]
        if not values or values[0] is None or values[0].startswith("-") or any(
                v is None for v in values):
            return None  # `printf -v name …` prints nothing; a run-time format
        return _printf(values[0], [v for v in values[1:] if v is not None])
    if program == "cat":
        if len(feeder.words) == 1:
            return next((r.body for r in feeder.redirects if r.op in ("<<", "<<-", "<<<")),
                        None)
        parts = [static_output(w.subs[0]) if w.text.startswith("<(") and len(w.subs) == 1
                 else None for w in feeder.words[1:]]
        return None if any(p is None for p in parts) else "".join(p for p in parts if p)
    return None


def _printf(fmt: str, args: list[str]) -> str | None:
    """printf's output for `%s`/`%b`/`%%` formats (the format reused while arguments
    remain, as printf does); None for any other directive."""
    if any(m.group(0) != "%%" and m.group(1) not in ("s", "b")
           for m in _PRINTF_DIRECTIVE.finditer(fmt)):
        return None
    out: list[str] = []
    rest = list(args)
    while True:  # escapes in the format and in `%b` arguments, never in `%s` ones
        at = 0
        for m in _PRINTF_DIRECTIVE.finditer(fmt):
            out.append(ansi_c(fmt[at:m.start()]))
            at = m.end()
            if m.group(0) == "%%":
                out.append("%")
            else:
                arg = rest.pop(0) if rest else ""
                out.append(ansi_c(arg) if m.group(1) == "b" else arg)
        out.append(ansi_c(fmt[at:]))
        if not rest or not any(m.group(0) != "%%" for m in _PRINTF_DIRECTIVE.finditer(fmt)):
            break
    return "".join(out)


def static_output(script: Script) -> str | None:
    """What a substitution prints, when that is known before run time: every command
    in it prints static text (`$(echo a; printf 'b')`); None otherwise."""
    if script.functions or script.error or script.readings or not script.commands:
        return None
    parts = [_fed_text(s) if s.stage == 0 and not any(r.writes for r in s.redirects)
             else None for s in script.commands]
    return None if any(p is None for p in parts) else "\n".join(p for p in parts if p)


def _files_only(feeder: Simple) -> bool:
    """`cat FILE… | sh`: what it feeds is file content, like `sh FILE` (not ours to see)."""
    return bool(feeder.words) and name(feeder.words[0]) == "cat" and not any(
        w.subs for w in feeder.words[1:]) and not feeder.redirects


def _static_xargs(simple: Simple, script: Script, text: str, depth: int
                  ) -> Iterator[Invocation]:
    """What xargs runs on static input: its words appended, or with a replace string
    (`-I{}`) each line put in for it (`xargs -I{} sh -c '{}' <<< 'rm x'` runs `rm x`)."""
    command = _strip_options("xargs", list(simple.words[1:]))
    if not command:
        return
    replace = xargs_replace(simple.words)
    if replace is None:
        argvs = [(*command, *(Word(v, v) for v in text.split()))]
    else:
        argvs = [tuple(Word(v, v) if (v := (w.value or "")) and replace not in v else
                       Word(v.replace(replace, line), v.replace(replace, line))
                       if w.value is not None else w for w in command)
                 for line in text.splitlines()[:16] if line.strip()]
    for argv in argvs:
        yield from _unwrap(simple, script, argv, (argv,), (STATIC_XARGS,), depth)


def _piped_text(simples: list[Simple], script: Script, depth: int) -> Iterator[Invocation]:
    """`echo 'rm -rf /' | sh` and `echo / | xargs rm -rf`: static text piped into a
    shell reading stdin runs; piped into xargs it becomes arguments. Text made at run
    time piped into a shell (`cmd | sh`) is code no rule has seen: opaque."""
    by_position: dict[tuple[int, int], list[Simple]] = {}
    for s in simples:
        if s.words:
            by_position.setdefault((s.pipeline, s.stage), []).append(s)
    for simple in simples:
        if simple.words and name(simple.words[0]) == "xargs":
            # `xargs rm -rf <<< /`: a here-string or heredoc becomes its arguments.
            body = next((r.body for r in simple.redirects
                         if r.op in ("<<", "<<-", "<<<") and r.body is not None), None)
            if body is not None:
                yield from _static_xargs(simple, script, body, depth)
        if not simple.words or simple.stage == 0:
            continue
        feeders = by_position.get((simple.pipeline, simple.stage - 1), [])
        texts = [_fed_text(f) for f in feeders]
        text = None if not texts or any(t is None for t in texts) else "\n".join(
            t for t in texts if t is not None)
        argv = innermost(simple.words)
        program = name(argv[0]) if argv else None
        if (program in SHELLS and reads_code_from_stdin(
                program, [w.shown for w in argv[1:]])) or (
                program in ("source", ".") and len(argv) > 1
                and argv[1].value in _STDIN_FILES):
            if text is not None:
                yield from _follow(text, simple, script, (program or "sh",), depth)
            elif feeders and not all(_files_only(f) for f in feeders):
                shown = " ".join(w.text for w in feeders[-1].words)
                yield _run_time_code(simple, argv, Word(shown, None), ())
        elif name(simple.words[0]) == "xargs" and text is not None:
            yield from _static_xargs(simple, script, text, depth)
