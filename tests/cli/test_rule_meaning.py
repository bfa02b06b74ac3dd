"""Rules mean what their author meant (issue 9), decided through `check --json`.

By class, each with variants and benign controls, in all four modes with the sandbox
`manual`: a deny rule holds under every spelling of its program; an allow rule grants
a program's ordinary behaviour only (`profiles/programs.yaml`), so a variant that uses
more is never allowed *by the rule* — it asks with a reason naming the feature (in
`bypassPermissions` the mode table then allows every command, as SPEC §2 says); every
benign control is allowed by its rule (`plan` caps it at ask, naming the rule).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from swifty_sandbox.cli.main import main

MODES = ["default", "acceptEdits", "plan", "bypassPermissions"]

RULES = [
    ("Bash(git *)", "allow"), ("Bash(git push *)", "deny"), ("Bash(rm *)", "deny"),
    *((f"Bash({p} *)", "allow") for p in (
        "ls", "echo", "cat", "find", "fd", "sed", "awk", "rg", "grep", "sort", "tar", "zip",
        "unzip", "rsync", "scp", "make", "man", "less", "more", "npm", "npx", "pnpm", "yarn",
        "pip", "pytest", "docker", "kubectl", "cargo", "go", "timeout", "flock", "xargs",
        "trap", "coproc", "tee", "cp", "mv", "ln", "install", "truncate", "dd", "touch",
        "chmod", "mkdir", "cd", "printf", "test", "read", "mkfs.ext4", "eval", "for",
        "watch", "tmux", "source", ".", "go", "curl", "perl", "gcc", "cmake", "patch",
        "ninja", "mvn", "gradle")),
    ("WriteFile(secrets/**)", "deny"),
    ("Bash(git -c core.pager=less *)", "allow"), ("Bash(sed -i *)", "allow"),
    ("Bash(npm publish --dry-run)", "allow"),
    ("Bash(chmod -R *)", "deny"), ("Bash(cp -rf *)", "deny"), ("Bash(git branch -d *)", "deny"),
    ("Bash(find * -delete)", "allow"),
]

# class → (variants denied by `Bash(git push *)` / `Bash(rm *)`, benign controls)
DENY_CLASSES: dict[str, tuple[list[str], list[str]]] = {
    "program path": (
        ["/usr/bin/git push", "/usr/bin/git push origin main", "../../usr/bin/git push",
         '"/usr/bin/git" push', "/bin/rm x", "/usr/bin/rm -f build/x", "./rm x",
         "$'/bin/rm' x"],
        ["git status", "ls -la", "echo /usr/bin/git push", "cat rm.txt"],
    ),
    "git global options": (
        ["git -C . push", "git -C /tmp/repo push origin", "git --git-dir=.git push",
         "git --git-dir .git --work-tree . push", "git --work-tree=. push",
         "git --no-pager push", "git -p push", "git --bare push", "git -c x.y=z push",
         "git --namespace n push", "git -C . -C .. push", "git -- push",
         "git -c alias.p=push p origin", "git -c alias.P='push --dry-run' P",
         "/usr/lib/git-core/git-push origin", "git-push origin"],
        ["git -C . status", "git --no-pager log --oneline -5", "git -c color.ui=auto log",
         "git log --grep=push", "git show push.txt"],
    ),
    "wrappers": (
        ["flock /tmp/l -c 'rm x'", "flock -w 5 /tmp/l --command 'rm x'", "flock /tmp/l rm x",
         "taskset -c 0 rm x", "taskset 0x1 rm x", "unshare -r rm x", "unshare --user rm x",
         "chroot / rm x", "parallel rm ::: a b", "parallel ::: 'rm a'",
         "script -qc 'rm x' /dev/null", "script -q -c 'rm x' /dev/null", "toybox rm x",
         "busybox rm x", "sudo -Eu root rm x", "sudo -nEu root rm x",
         "sudo --user=root rm x", "env -S 'rm x'", "env --split-string='rm x'",
         "env -S'rm x'", "env -iS 'rm x'", "xargs -i rm {}", "xargs -l rm", "xargs -e rm",
         "xargs -I{} rm {}", "nice -n19 rm x", "su -c 'rm x'", "setsid rm x",
         "nsenter -t 1 rm x", "coproc rm x", "stdbuf -oL rm x", "timeout -s9 5 rm x"],
        ["flock /tmp/l ls", "xargs -i echo {}", "xargs -n1 echo", "timeout 5 ls",
         "coproc ls"],
    ),
    "shell strings": (
        ["trap 'rm x' EXIT", "trap -- 'rm -f x' INT TERM", "coproc w { rm x; }",
         "echo hi > >(rm x)", "cat < <(rm x)", "{rm,x}", "{r,}m x", "alias d=rm; d x",
         "alias g='git push'; g origin", "bash -c 'trap \"rm x\" EXIT'",
         "eval 'rm x'", "git -c alias.p='!rm x' p", "git -calias.s='!rm -f y' s",
         "fd . -x rm {}", "fd -X rm", "watch 'rm x'", "watch -n 5 rm x", "tmux new 'rm x'",
         ". <(echo 'rm x')", "source <(printf 'rm x')", "git rebase --exec 'rm x' main",
         "git rebase -x 'rm x' main", "git bisect run rm x", "git submodule foreach 'rm x'",
         "git submodule foreach --recursive 'rm x'", "git filter-branch --tree-filter 'rm x'",
         "r=rm; $r x", "for p in rm; do $p x; done"],
        ["trap 'echo bye' EXIT", "echo {a,b}", "ls src/{a,b}", "fd -e py",
         "watch -n 5 ls", "tmux ls", "read -r line <<< x",
         "echo 'rm x'"],
    ),
}

# Code handed to a shell as text: a process substitution with options or arguments, on
# stdin or a descriptor, several printers, a whole `$(…)` of static output, `echo`'s
# dashes, printf's format, a pipe into a wrapped shell or `source /dev/stdin`.
DENY_CLASSES["code as text"] = (
    ["bash -x <(echo 'rm x')", "bash <(echo 'rm x') a", "bash -- <(echo 'rm x')",
     "bash --norc <(echo 'rm x')", "bash <(echo ls; echo 'rm x')",
     "cat <(echo 'rm x') | bash", "bash < <(echo 'rm x')", "bash /dev/fd/3 3< <(echo 'rm x')",
     "source /dev/stdin <<< 'rm x'", ". /dev/stdin < <(printf 'rm x')",
     ". <(printf '%s\\n' 'rm x')", "sh -c \"$(echo 'rm x')\"", "eval \"$(printf 'rm x')\"",
     "eval $(echo rm x)", "{ echo ls; echo 'rm x'; } | sh", "echo 'rm x' | sudo bash",
     "echo 'rm x' | source /dev/stdin", "bash <(echo git push --force)",
     "bash <(echo rm -f x)", "sh <<< \"$(echo 'rm x')\"",
     # a script the command itself wrote, xargs putting its input into a shell's code
     "printf 'rm x' > s.sh; bash s.sh", "cat > s.sh <<'EOF'\nrm -f x\nEOF\nchmod +x s.sh && ./s.sh",
     "echo ls > s.sh; echo 'rm x' >> s.sh; sh ./s.sh", "echo 'rm x' > s.sh; source s.sh",
     "echo 'rm x' | xargs -I{} sh -c '{}'", "xargs -I{} sh -c {} <<< 'rm x'",
     "echo x | xargs -I{} rm {}"],
    ["source <(echo ls)", "eval \"$(echo ls)\"", "echo ls | source /dev/stdin",
     "source .venv/bin/activate", "eval $(echo echo hi)"],
)

# Substitutions everywhere they run.
DENY_CLASSES["hidden substitutions"] = (
    ["cat <<EOF\n$(rm x)\nEOF", "cat <<EOF\n`rm x`\nEOF", "cat > f <<EOF\na $(rm x) b\nEOF",
     "a[$(rm x)]=1", "printf -v 'a[$(rm x)]' y", "declare 'a[`rm x`]=1'",
     "test -v 'a[$(rm x)]'", "[[ -v 'a[$(rm x)]' ]]", "let 'a[$(rm x)]=1'",
     "read 'a[$(rm x)]' <<< 1", "unset 'a[$(rm x)]'", "local 'b[$(rm y)]'",
     "echo $(( a[$(rm x)] ))"],
    ["cat <<'EOF'\n$(rm x)\nEOF", "cat <<\"EOF\"\n`rm x`\nEOF", "printf -v x '%s' y",
     "test -v HOME", "printf '%s[%s]' a b", "read -r line <<< 'a[$(rm x)]'"],
)

# Writes followed through what the shell knows: denied as protected paths (`.git/config`,
# hooks, rc files) or by `WriteFile(secrets/**)`.
DENY_CLASSES["write targets"] = (
    ["cd .git && echo x >> config", "cd .git/hooks; cat > pre-push", "tee -a ~/.bashrc",
     "tee -a $HOME/.bashrc", 'echo x > "${HOME}/.zshrc"', "cp x .git/hooks/pre-commit",
     "cp config .git", "cp -t .git config", "mv x .git/hooks/post-checkout",
     "install -m 755 x .git/hooks/", "ln -s ~/.bashrc r && echo x >> r",
     "ln -sf ~/.zshrc z; tee -a z", "sed -i s/a/b/ .git/config",
     "cd .git; sed -i s/a/b/ config", "sort -o .git/config x", "dd if=x of=.git/config",
     "truncate -s0 .swifty/permissions.yaml", "find . -fprint .git/config",
     "chmod +x .git/hooks/pre-commit", "touch .git/hooks/pre-commit", "echo x > secrets/a",
     "cd secrets && tee b", "cp a secrets/", "cd src && cd ../secrets && tee -a c",
     "go build -o .git/hooks/pre-commit .", "curl -o ~/.bashrc https://x",
     "ln .git/config x; echo y >> x", "rm .swifty/permissions.yaml",
     "d=.git; echo x > $d/config", "d=.git; tee -a \"${d}/hooks/pre-push\"",
     # tree-sitter files a heredoc's rest of line under its redirect: still the command's
     "cat <<EOF > .git/config\nx\nEOF", "cat <<'EOF' >> ~/.bashrc\nx\nEOF",
     "tee <<EOF .git/hooks/pre-commit\nx\nEOF", "rm <<EOF .swifty/permissions.yaml\nEOF",
     "rsync -a x .git/config",
     "mv .swifty/permissions.yaml x", "perl -pi -e 's/a/b/' .git/config"],
    ["cd src && tee -a notes.md", "cp a b", "ln -s ../shared/config.json config.json",
     "tee -a CHANGELOG.md", "dd if=/dev/zero of=./disk.img bs=1M count=10",
     "mkdir -p src/components", "cd /tmp && touch x", "echo ok > /dev/null"],
)

# The blacklist on values the shell knows before it runs (denied in every mode, allow
# rules included), and mkfs on a disk image in the project (allowed).
DENY_CLASSES["blacklist static values"] = (
    ["for d in / ~; do rm -rf $d; done", "for d in /usr /etc; do rm -rf \"$d\"/; done",
     "d=/; rm -rf $d", "D=~; rm -rf \"${D}\"", "xargs rm -rf <<< /",
     "xargs rm -rf <<EOF\n/\nEOF", "xargs -0 rm -rf <<< '/'", "eval \"rm -rf $HOME\"",
     "eval \"rm -rf ${HOME}/\"", "bash -c \"rm -rf $HOME\"", "find / -name '*.old' -delete",
     "find ~ -type f -delete", "find /usr -mtime +1 -delete", "find $HOME -name x -delete",
     "mkfs.ext4 /dev/sda1", "mkfs.ext4 dev.img", "mkfs.ext4 missing.img", "mkfs.ext4 $X",
     "cd /dev && mkfs.ext4 disk.img", "ln -sf /dev/sda disk.img; mkfs.ext4 disk.img",
     "mkfs.ext4 /etc/passwd"],
    ["for f in src/*.ts; do echo \"$f\"; done", "d=build; echo $d",
     "xargs echo <<< hello", "eval \"echo $HOME\"", "find . -name '*.pyc' -delete",
     "find build -name '*.o' -delete", "mkfs.ext4 disk.img", "mkfs.ext4 -F -L data disk.img"],
)

# A deny rule with flags holds under every spelling of them.
DENY_CLASSES["flag spellings"] = (
    ["chmod --recursive 755 x", "chmod -vR 755 x", "chmod -R -v 755 x", "cp -fr a b",
     "cp -r -f a b", "cp --recursive --force a b", "cp -Rf a b", "cp -f -R -v a b",
     "git branch --delete feat", "git -C . branch -d feat", "sudo chmod -c -R 700 d"],
    ["chmod 755 x", "cp -r a b", "cp -f a b", "git branch -a", "git branch feat",
     "cp -- -rf b"],
)

# class → (variants an allow rule does not cover, benign controls it does)
ALLOW_CLASSES: dict[str, tuple[list[str], list[str]]] = {
    "git": (
        ["git -c core.pager=sh log", "git -c alias.x='!sh' x", "git -c core.sshCommand=sh fetch",
         "git --exec-path=/tmp log", "git fetch --upload-pack=sh origin",
         "git clone -u sh repo", "git difftool -x sh", "git rebase --exec sh main",
         "git rebase -x sh main", "git bisect run sh", "git submodule foreach sh",
         "git filter-branch x", "git config core.pager sh", "git config --add a.b c",
         "git log --output=x", "git format-patch -o out HEAD~1", "git fetch origin",
         "git --git-dir=/tmp/x/.git log", "git -c core.pager=less -c alias.x='!sh' x",
         "git log $OPT", "git -C /tmp/evil status", "cd /tmp/evil && git status",
         "git --work-tree=/tmp/x status", "cd && git log", "git grep -O sh x"],
        ["git status", "git diff --stat", "git log --oneline -20", "git config user.name",
         "git config --get remote.origin.url", "git commit -m 'x'", "git checkout -b f",
         "git -c core.pager=less log", "git rebase -i main", "git cherry-pick -x abc",
         "git -C sub status", "cd src && git status", "git log -C --stat"],
    ),
    "read-only tools": (
        ["find . -exec sh -c 'git -c core.pager=sh log' ;", "find . -execdir id ;",
         "find . -exec $X {} ;", "find . -fprint /tmp/x", "find . -name x -delete -print",
         "fd -x sh", "fd -X id",
         "sed -i.bak -e 's/a/b/e' f", "sed 's/a/b/e' f", "sed '1e id' f",
         "sed 'w out' f", "sed -e 's/x/y/w out' f", "sed -f script.sed f",
         "awk 'BEGIN{system(\"id\")}'", "awk '{print > \"out\"}' f", "awk '{print | \"sh\"}' f",
         "awk -f prog.awk f", "rg --pre sh foo", "rg -z foo", "rg --hostname-bin=sh x",
         "sort -o out x", "sort --compress-program=sh x", "tar --to-command=sh -xf a.tar",
         "tar -I sh -xf a", "tar --checkpoint-action=exec=sh -cf a .", "zip a.zip x -TT sh",
         "rsync -e sh a b", "rsync a host:b", "scp -S sh a b", "scp a host:b",
         "man -P sh ls", "man -H ls", "less -o log f", "less '+!id' f",
         "cat list | xargs rg x", "find . | xargs sed -n p", "tar xIf sh a.tar",
         "tar --use-compress-program sh -xf a.tar"],
        ["find . -name '*.py' -type f", "fd -e py", "sed -i s/a/b/ f", "sed -n '1,80p' f",
         "find . -name '*.ts' -exec grep -l x {} +", "fd -e ts -x cat",
         "sed 's/a/b/g' f",
         "awk '{print $2}' f", "awk '$1 > 5 {print}' f", "awk 'a||b' f", "rg -n foo src/",
         "grep -rn x .", "sort -u words.txt", "tar -xzf a.tgz -C vendor/", "zip -r a.zip src",
         "unzip -o dist.zip -d dist/", "rsync -a src/ dst/", "man ls", "less f", "more f"],
    ),
    "build and package tools": (
        ["make --eval=x", "make -f other.mk", "make SHELL=/tmp/x", "npm config set x y",
         "npm publish", "npm exec foo", "npm test --script-shell=sh", "pnpm dlx foo",
         "yarn dlx foo", "pip install -i https://evil x", "pip install --target /tmp/x y",
         "pytest -p evil", "pytest -o addopts=-pevil", "pytest --basetemp=/tmp/x",
         "docker run --privileged x", "docker run -v /:/h x", "docker --host tcp://h ps",
         "docker push x", "docker run --network host x", "docker run --net=host x",
         "go build -toolexec=sh .", "kubectl exec -it p -- sh", "kubectl apply -f x",
         "kubectl --kubeconfig k get pods", "cargo --config 'build.rustc-wrapper=\"sh\"' build",
         "cargo publish", "go build -toolexec sh .", "go env -w GOFLAGS=x", "go get x",
         "npm publish --dry-run --tag x"],
        ["make", "make -j4 test", "npm test", "npm ci", "npm run build", "npx tsc --noEmit",
         "pnpm install --frozen-lockfile", "yarn test", "pip install -r requirements.txt",
         "pytest -q", "pytest -x tests/test_api.py", "docker ps", "docker build -t app .",
         "kubectl get pods", "cargo build --release", "cargo test", "go test ./...",
         "go vet ./...", "npm publish --dry-run", "go build -o bin/server ./cmd/server"],
    ),
    # Writes outside the project, the temp dirs and the writable roots, and directory
    # switches into another tree (whose build files nothing protects).
    "places": (
        ["tar -xf x.tar -C ~", "tar --directory ~ -xf x.tar", "tar --directory=/etc -xf a",
         "tar -cf ~/x.tar .", "tar -xf a -C ../other", "make -C /other", "make -C ../other",
         "make --directory=/srv/x", "rsync -a src/ ~/", "rsync -a x ~/notes",
         "cp -t ~ x", "cp x ~/y", "mv x ~/", "unzip x.zip -d ~", "unzip -d /etc x.zip",
         "cargo build --manifest-path /other/Cargo.toml", "cargo build --target-dir ~/t",
         "npm --prefix /other install", "npm install --prefix ../other",
         "gcc -o ~/x a.c", "go build -o ~/x .", "go -C /other build", "zip ~/a.zip x",
         "curl -o ~/x https://a", "cmake --build /other", "cmake -B /other -S .",
         "ninja -C /other", "mvn -f /other/pom.xml test", "gradle -p /other test",
         "patch -d /other -p1 -i x.diff", "echo x > ~/notes", "cat a >> /etc/hosts",
         "cd ~ && cp a b", "make -C $D", "tar -xf a -C $D", "cd ~ && tar -xf a.tar",
         "cd /etc && unzip a.zip"],
        ["tar -xf x.tar", "tar -xzf a.tgz -C vendor/", "tar -xf ~/Downloads/x.tar -C build",
         "tar -czf dist/a.tgz src", "tar -cf /tmp/a.tar .", "make -C sub", "cargo build",
         "cargo build --target-dir target/x", "gcc -o bin/x a.c", "rsync -a src/ dst/",
         "npm --prefix frontend run build", "unzip -o dist.zip -d dist/", "echo hi > /tmp/x",
         "cat x > out.txt", "zip -r a.zip src", "cmake -B build -S .", "cmake --build build",
         "ninja -C build", "cp a /tmp/b", "cd src && cp a b", "cp $(ls) /tmp/",
         "cd vendor && tar -xf a.tar", "cd /tmp && unzip a.zip"],
    ),
    "assignments": (
        ["PATH=/tmp ls", "LD_PRELOAD=/tmp/x.so ls", "export PATH=/tmp; ls",
         "PATH=/tmp; ls", "declare -x LD_PRELOAD=x; ls", "env PATH=/tmp ls",
         "sudo LD_PRELOAD=x ls", "GIT_SSH_COMMAND=sh git status", "GIT_PAGER=sh git log",
         "GIT_CONFIG_COUNT=1 git log", "PAGER=sh man ls", "MANPAGER=sh man ls",
         "NODE_OPTIONS=--require=/tmp/x npm test", "PYTHONPATH=/tmp pytest",
         "BASH_ENV=/tmp/x make", "LESSOPEN='|sh %s' less f", "RUSTC_WRAPPER=sh cargo build",
         "GOFLAGS=-toolexec=sh go build", "read PATH <<< /tmp; ls",
         "printf -v LD_PRELOAD %s /tmp/x.so; ls"],
        ["FOO=1 ls", "LANG=C sort x", "export NODE_ENV=production && npm run build",
         "count=1; echo $count", "CI=1 npm test", "RUST_BACKTRACE=1 cargo test"],
    ),
}


def decide(project: Path, commands: list[str], mode: str) -> list[dict[str, object]]:
    batch = project / "batch.jsonl"
    batch.write_text("".join(json.dumps(c) + "\n" for c in commands))
    result = CliRunner().invoke(main, ["check", "--project", str(project), "--json",
                                       "--mode", mode, "--sandbox", "manual",
                                       "--batch", str(batch)])
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(lines) == len(commands), result.output
    return lines


@pytest.fixture
def rules(project: Path) -> Path:
    (project / "disk.img").write_bytes(bytes(4096))  # a disk image, not a disk
    (project / "dev.img").symlink_to("/dev/null")
    (project / ".swifty").mkdir()
    (project / ".swifty" / "permissions.yaml").write_text(
        "".join(f"- rule: {json.dumps(r)}\n  effect: {e}\n" for r, e in RULES))
    return project


def rule_text(decision: dict[str, object]) -> str | None:
    rule = decision["rule"]
    return rule["text"] if isinstance(rule, dict) else None


def allowed_by_rule(decision: dict[str, object], mode: str) -> bool:
    """Allowed by an allow rule; in `plan`, capped at ask naming that rule."""
    if mode == "plan":
        return decision["effect"] == "ask" and rule_text(decision) is not None
    return decision["effect"] == "allow" and decision["layer"] == "rule"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", list(DENY_CLASSES))
def test_deny_holds_under_every_spelling(rules: Path, name: str, mode: str) -> None:
    variants, controls = DENY_CLASSES[name]
    decisions = decide(rules, variants + controls, mode)
    for command, decision in zip(variants, decisions, strict=False):
        assert decision["effect"] == "deny", (command, decision)
        assert decision["layer"] in ("protected", "blacklist") or rule_text(decision) in (
            "Bash(git push *)", "Bash(rm *)", "WriteFile(secrets/**)", "Bash(chmod -R *)",
            "Bash(cp -rf *)", "Bash(git branch -d *)"), (command, decision)
    for command, decision in zip(controls, decisions[len(variants):], strict=True):
        assert allowed_by_rule(decision, mode), (command, decision)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", list(ALLOW_CLASSES))
def test_allow_grants_ordinary_behaviour_only(rules: Path, name: str, mode: str) -> None:
    variants, controls = ALLOW_CLASSES[name]
    decisions = decide(rules, variants + controls, mode)
    for command, decision in zip(variants, decisions, strict=False):
        assert decision["layer"] != "rule", (command, decision)
        if mode == "bypassPermissions":  # the mode table allows every command …
            assert (decision["effect"], decision["layer"]) in (
                ("allow", "mode"), ("ask", "analysis")), command  # … it can see
        else:
            assert decision["effect"] == "ask", (command, decision)
    for command, decision in zip(controls, decisions[len(variants):], strict=True):
        assert allowed_by_rule(decision, mode), (command, decision)


@pytest.mark.parametrize("mode", MODES)
def test_code_made_at_run_time_is_never_allowed(project: Path, mode: str) -> None:
    """Even under `Bash(*)`: a deny rule cannot see code that exists only at run time,
    so no allow may cover it (it asks, as a program name computed at run time does)."""
    (project / ".swifty").mkdir()
    (project / ".swifty" / "permissions.yaml").write_text(
        "- rule: Bash(*)\n  effect: allow\n- rule: Bash(git push *)\n  effect: deny\n")
    commands = ['eval "$x"', 'bash -c "$x"', "bash <(gen)", "gen | sh", 'bash <<< "$x"',
                "source <(gen)", "sh /dev/stdin < <(gen)", "eval $(cat f)",
                'echo "$x" | bash', "x=$(gen); sh -c \"$x\"",
                "exec 3< <(echo 'git push'); bash /dev/fd/3", "source /proc/self/fd/4",
                "gen > s.sh; sh s.sh", "gen | xargs -I{} sh -c '{}'",
                "gen | xargs -I % bash -c 'echo %'"]
    for command, decision in zip(commands, decide(project, commands, mode), strict=True):
        assert (decision["effect"], decision["layer"]) == ("ask", "analysis"), (
            command, decision)
    controls = ["bash script.sh", "cat f | bash", "bash < f", "echo ls | bash",
                "bash -c 'ls'", "echo ls > s.sh; bash s.sh", "gen | xargs -I{} echo {}"]
    for command, decision in zip(controls, decide(project, controls, mode), strict=True):
        assert allowed_by_rule(decision, mode), (command, decision)


def test_the_reason_names_the_feature_and_the_rule(rules: Path) -> None:
    decision = decide(rules, ["git -c core.sshCommand=sh fetch"], "default")[0]
    reason = str(decision["reason"])
    assert "`git … -c core.sshCommand=sh` runs other code" in reason
    assert "`Bash(git *)`" in reason and "permissions.yaml:1" in reason
    decision = decide(rules, ["PATH=/tmp ls"], "default")[0]
    assert "`ls … PATH=…` sets a variable that changes what runs" in str(decision["reason"])


def test_chinese_reason(rules: Path) -> None:
    batch = rules / "one.jsonl"
    batch.write_text(json.dumps("sort -o out x") + "\n")
    result = CliRunner().invoke(main, ["check", "--project", str(rules), "--json",
                                       "--sandbox", "manual", "--batch", str(batch)],
                                env={"SWIFTY_LANG": "zh"})
    assert "会写入文件" in json.loads(result.stdout)["reason"]


def test_auto_sandbox_still_runs_what_the_rule_does_not_cover_confined(rules: Path) -> None:
    """The allow does not apply, so the command is decided as if no rule matched."""
    batch = rules / "one.jsonl"
    batch.write_text(json.dumps("git -c core.pager=sh log") + "\n")
    result = CliRunner().invoke(main, ["check", "--project", str(rules), "--json",
                                       "--sandbox", "auto", "--batch", str(batch)])
    assert json.loads(result.stdout)["layer"] == "sandbox"


def test_a_rule_that_names_the_feature_allows_it(project: Path) -> None:
    (project / ".swifty").mkdir()
    (project / ".swifty" / "permissions.yaml").write_text("".join(
        f"- rule: {json.dumps(r)}\n  effect: allow\n" for r in (
            "Bash(git *)", "Bash(git -c core.pager=less *)", "Bash(sort -o *)",
            "Bash(git log --output=*)", "Bash(find * -delete)")))
    allowed = ["git -c core.pager=less log", "sort -o out.txt in.txt", "git log --output=x",
               "find build -name '*.o' -delete"]
    asked = ["git -c core.pager=less -c core.editor=sh log", "git -c core.pager=sh log",
             "git diff --output=x", "find . -name x -delete -print",
             "sort --compress-program=sh x"]
    decisions = decide(project, allowed + asked, "default")
    assert [d["effect"] for d in decisions] == ["allow"] * 4 + ["ask"] * 5, decisions
