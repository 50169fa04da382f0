"""Every command in the README and docs/*.md is checked, so a wrong file, task, option or argument cannot
reappear there.

Each ```bash block is marked just above it: `<!-- commands: offline -->` blocks are run here (from a temporary
folder, `../shared/data` read at `$KOBLEX_SHARED_DATA`), `<!-- commands: needs <network, a GPU, an API key, ...>
-->` blocks are not run but still checked: every `inspect eval koblex_tasks/<task>` names a registered task, its
`-T` arguments are parameters of that task, `--solver koblex_tasks/<name>` a registered solver with its `-S`
arguments among the solver's parameters; every `koblex ...` names an existing command and only its options; every
`../shared/data/...` path exists, and so does any other file an offline block names.
"""

from __future__ import annotations

import inspect
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import click
import pytest

from koblex_tasks._docs import documents, tasks
from koblex_tasks.cli.main import koblex
from koblex_tasks.tasks import benchmarks

ROOT = Path(__file__).resolve().parent.parent
BLOCK = re.compile(r"(?P<marker><!-- commands: (?P<how>[^>]*?) -->\n+)?```bash\n(?P<body>.*?)```", re.S)
SHARED = "../shared/data/"
PLACEHOLDER = re.compile(r"^(…|\.\.\.|FILE|LOG…?|DIR|PATH|<[^>]+>)$")


@dataclass(frozen=True)
class Block:
    line: int
    how: str | None
    body: str
    file: str = "README.md"

    @property
    def where(self) -> str:
        return f"{self.file} line {self.line}"

    @property
    def offline(self) -> bool:
        return self.how == "offline"

    def commands(self) -> list[list[str]]:
        """Each command as its words: continuations joined, comments dropped, `&&` chains split, `VAR=x` prefixes
        and `export` lines left out."""
        text = self.body.replace("\\\n", " ")
        out: list[list[str]] = []
        for line in text.splitlines():
            words = shlex.split(line, comments=True)
            chunk: list[str] = []
            for word in [*words, "&&"]:
                if word in ("&&", ";", "|"):
                    while chunk and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", chunk[0]):
                        chunk.pop(0)
                    if chunk and chunk[0] != "export":
                        out.append(chunk)
                    chunk = []
                else:
                    chunk.append(word)
        return out


def blocks() -> list[Block]:
    """Every ```bash block of the README and of each reference page."""
    found = []
    for path in documents(ROOT):
        text = path.read_text(encoding="utf-8")
        name = str(path.relative_to(ROOT))
        found += [
            Block(text[: m.start()].count("\n") + 1, m.group("how"), m.group("body"), name)
            for m in BLOCK.finditer(text)
        ]
    return found


def test_the_docs_pages_are_read() -> None:
    files = {b.file for b in blocks()}
    assert {"README.md", "docs/koblex.md", "docs/legit.md"} <= files, files


def test_every_command_block_is_marked() -> None:
    unmarked = [b.where for b in blocks() if not b.how]
    assert not unmarked, f"{unmarked}: mark each ```bash block <!-- commands: offline | needs ... -->"
    assert all(b.offline or b.how.startswith("needs ") for b in blocks() if b.how)


def _option_values(words: list[str], flag: str) -> list[str]:
    return [words[i + 1] for i, w in enumerate(words[:-1]) if w == flag]


def _solver_factories() -> dict[str, object]:
    return {
        name: solver for b in benchmarks() for name, solver in zip(b.solver_names, b.solvers, strict=True)
    }


def check_inspect_eval(words: list[str]) -> list[str]:
    problems = []
    target = words[2] if len(words) > 2 else ""
    if not target.startswith("koblex_tasks/"):
        return problems
    task = tasks().get(target.removeprefix("koblex_tasks/"))
    if task is None:
        return [f"{target} is not a registered task"]
    params = set(inspect.signature(task).parameters)
    for pair in _option_values(words, "-T"):
        if pair.partition("=")[0] not in params:
            problems.append(f"{target}: -T {pair}: no such task parameter")
    solvers = _solver_factories()
    for name in _option_values(words, "--solver"):
        if name not in solvers:
            problems.append(f"--solver {name} is not a registered solver")
            continue
        solver_params = set(inspect.signature(solvers[name]).parameters)  # type: ignore[arg-type]
        for pair in _option_values(words, "-S"):
            if pair.partition("=")[0] not in solver_params:
                problems.append(f"--solver {name}: -S {pair}: no such solver parameter")
    return problems


def check_koblex(words: list[str]) -> list[str]:
    """The subcommand path exists and every `--option` is one of the final command's."""
    command: click.Command = koblex
    ctx = click.Context(koblex)
    rest = words[1:]
    while isinstance(command, click.Group) and rest and not rest[0].startswith("-"):
        sub = command.get_command(ctx, rest[0])
        if sub is None:
            return [f"koblex: no command {rest[0]!r}"]
        command, rest = sub, rest[1:]
    options = {opt for p in command.params for opt in (*p.opts, *p.secondary_opts)} | {"--help", "-h"}
    return [
        f"{' '.join(words[:2])}: no option {w.split('=')[0]}"
        for w in rest
        if w.startswith("--") and w.split("=")[0] not in options
    ]


def _local_file(piece: str) -> bool:
    """A word that names a data file by a path (not a placeholder such as FILE)."""
    return (
        "/" in piece
        and bool(re.search(r"\.(jsonl|yaml|yml|csv|eval|json)$", piece))
        and not PLACEHOLDER.match(piece)
    )


def check_paths(words: list[str], shared: Path | None, offline: bool) -> list[str]:
    problems = []
    for word in words:
        for piece in word.split("="):
            if piece.startswith(SHARED):
                if shared is not None and not (shared / piece.removeprefix(SHARED)).exists():
                    problems.append(f"{piece} does not exist in the shared data")
            elif offline and _local_file(piece) and not (ROOT / piece).exists():
                problems.append(f"{piece}: no such file")
    return problems


def test_every_command_names_what_exists() -> None:
    shared_root = os.environ.get("KOBLEX_SHARED_DATA")
    shared = Path(shared_root) if shared_root else None
    problems = []
    for block in blocks():
        for words in block.commands():
            found = check_paths(words, shared, block.offline)
            if words[:2] == ["inspect", "eval"]:
                found += check_inspect_eval(words)
            elif words[0] == "koblex":
                found += check_koblex(words)
            problems += [f"{block.where}: {p}" for p in found]
    assert not problems, "\n".join(problems)


def test_the_checker_catches_mistakes() -> None:
    assert check_inspect_eval(["inspect", "eval", "koblex_tasks/koblx"]) == [
        "koblex_tasks/koblx is not a registered task"
    ]
    assert check_inspect_eval(["inspect", "eval", "koblex_tasks/koblex", "-T", "hop=1"])
    assert check_inspect_eval(
        ["inspect", "eval", "koblex_tasks/koblex", "--solver", "koblex_tasks/ircot", "-S", "kk=3"]
    )
    assert (
        check_inspect_eval(
            ["inspect", "eval", "koblex_tasks/koblex", "--solver", "koblex_tasks/ircot", "-S", "k=3"]
        )
        == []
    )
    assert check_koblex(["koblex", "replay", "x.jsonl", "--offical"]) == [
        "koblex replay: no option --offical"
    ]
    assert check_koblex(["koblex", "leaderboard", "bild"]) == ["koblex: no command 'bild'"]
    assert check_koblex(["koblex", "grid", "report", "logs"]) == []
    assert Block(1, "offline", "A=1 koblex replay f \\\n  --official && echo ok # note\n").commands() == [
        ["koblex", "replay", "f", "--official"],
        ["echo", "ok"],
    ]


@pytest.mark.slow
def test_the_offline_commands_run(shared_data: Path, tmp_path: Path) -> None:
    """Each offline block of the README and the docs, as a user runs it, in a fresh folder next to a
    `../shared/data` link (minus the install and test commands: CI runs those)."""
    (tmp_path / "work").mkdir()
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "data").symlink_to(shared_data)
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "PATH": os.environ.get("PATH", ""),
    }
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    for block in [b for b in blocks() if b.offline]:
        for words in block.commands():
            if words[0] in ("pip", "python") or words[:2] == ["inspect", "view"]:
                continue  # installing and the test suite are CI's; `inspect view` is a server
            proc = subprocess.run(
                words, cwd=tmp_path / "work", env=env, capture_output=True, text=True, timeout=600
            )
            assert proc.returncode == 0, f"{block.where}: {' '.join(words)}\n{proc.stderr[-2000:]}"
