"""The documentation a newcomer follows: the README is a short guide with both set-up commands
on its first screen, every relative link in it and in the docs resolves (files and headings),
every command it writes parses its arguments, and CI runs the README's test command.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from posviz.cli import build_parser
from posviz.training.command import build_train_parser

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
PAGES = [
    README,
    ROOT / "SECURITY.md",
    ROOT / "CONTRIBUTING.md",
    *sorted((ROOT / "docs").glob("*.md")),
]
RUN_COMMAND = (
    "PIP_RETRIES=0 python -m pip install -r requirements.txt && python -m streamlit run app.py"
)
TEST_COMMAND = "PIP_RETRIES=0 python -m pip install -r requirements-dev.txt && python -m pytest"
LINK = re.compile(r"(?<!\!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```([a-z]*)\n(.*?)^```", re.DOTALL | re.MULTILINE)
SHELL = {"bash", "sh", "shell", "console"}  # code blocks whose lines are commands


def test_the_pages_exist() -> None:
    names = {page.relative_to(ROOT).as_posix() for page in PAGES}
    for name in ("docs/guide.md", "docs/architecture.md", "docs/performance.md",
                 "docs/operations.md", "SECURITY.md", "CONTRIBUTING.md"):  # fmt: skip
        assert name in names and (ROOT / name).is_file(), name


def test_the_readme_is_a_short_guide_with_both_commands_on_its_first_screen() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.encode("utf-8")) <= 10_000
    first_screen = "\n".join(text.splitlines()[:45])
    assert RUN_COMMAND in first_screen and TEST_COMMAND in first_screen
    assert not re.search(r"load average|\bcommit `[0-9a-f]{7}", text), "run logs belong in docs/"


def test_ci_runs_the_readmes_test_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert f"TEST_COMMAND='{TEST_COMMAND}'" in ci


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to dashes."""
    text = re.sub(r"[`*_]|<[^>]+>", "", heading.strip().lower())
    return re.sub(r"\s", "-", re.sub(r"[^\w\- ]", "", text))


def _anchors(page: Path) -> set[str]:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    return {_slug(line.lstrip("#")) for line in text.splitlines() if re.match(r"#{1,6} ", line)}


def _links(page: Path) -> Iterator[str]:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    for match in LINK.finditer(text):
        yield match[1] or match[2]


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.relative_to(ROOT).as_posix())
def test_every_relative_link_resolves(page: Path) -> None:
    broken = []
    for link in _links(page):
        if re.match(r"[a-z]+:", link):  # https:, mailto:: not checked offline
            continue
        target, _, anchor = link.partition("#")
        path = (page.parent / target).resolve() if target else page
        if not path.exists():
            broken.append(
                f"{link}: no {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}"
            )
        elif anchor and path.suffix == ".md" and anchor not in _anchors(path):
            broken.append(f"{link}: no heading #{anchor} in {path.name}")
    assert not broken, broken


def _commands() -> Iterator[tuple[str, list[str]]]:
    """Every ``python -m posviz``, ``posviz`` and ``python <script>.py`` command in a code
    block of the pages (continued lines joined, comments dropped)."""
    for page in PAGES:
        for language, block in FENCE.findall(page.read_text(encoding="utf-8")):
            if language not in SHELL:
                continue
            for line in block.replace("\\\n", " ").splitlines():
                lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
                lexer.whitespace_split, lexer.commenters = True, "#"
                words = list(lexer)
                for operator in (">", ">>", "<", "|", "||", "&&", "&", ";"):  # the command ends
                    if operator in words:
                        words = words[: words.index(operator)]
                while words and "=" in words[0] and not words[0].startswith("-"):
                    words = words[1:]  # VAR=value before the command
                posviz = words[:3] == ["python", "-m", "posviz"] or words[:1] == ["posviz"]
                script = words[:1] == ["python"] and len(words) > 1 and words[1].endswith(".py")
                if posviz or script:
                    yield page.name, words


class _Parsed(Exception):
    """Raised instead of running the script, once its arguments parsed."""


def _parse_script(script: Path, arguments: list[str], monkeypatch: pytest.MonkeyPatch) -> Any:
    """Run ``script``'s ``main()`` until its parser has read ``arguments``, then stop."""
    original = argparse.ArgumentParser.parse_args

    def parse_then_stop(
        self: argparse.ArgumentParser, args: Any = None, namespace: Any = None
    ) -> Any:
        raise _Parsed(original(self, arguments if args is None else args, namespace))

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", parse_then_stop)
    monkeypatch.setattr(sys, "argv", [str(script), *arguments])
    spec = importlib.util.spec_from_file_location(f"_docs_{script.stem}", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)  # dataclasses look their module up
    monkeypatch.syspath_prepend(str(ROOT))
    spec.loader.exec_module(module)
    with pytest.raises(_Parsed):
        module.main()


def test_every_written_command_parses_its_arguments(monkeypatch: pytest.MonkeyPatch) -> None:
    commands = list(_commands())
    assert any(words[:3] == ["python", "-m", "posviz"] for _, words in commands)
    assert any("benchmarks/" in words[1] for _, words in commands if words[0] == "python")
    for page, words in commands:
        arguments = words[3:] if words[0] == "python" and words[1] == "-m" else words[1:]
        if words[0] == "python" and words[1] != "-m":
            script = ROOT / words[1]
            assert script.is_file(), f"{page}: {words[1]} does not exist"
            with monkeypatch.context() as patch:
                _parse_script(script, words[2:], patch)
        elif arguments[:1] == ["app"]:
            continue  # `posviz app ...`: Streamlit's own options, passed through
        elif arguments[:1] == ["train"]:
            try:
                build_train_parser().parse_args(arguments[1:])
            except SystemExit as error:
                pytest.fail(f"{page}: `{shlex.join(words)}` does not parse ({error})")
        else:
            try:
                build_parser().parse_args(arguments)
            except SystemExit as error:
                pytest.fail(f"{page}: `{shlex.join(words)}` does not parse ({error})")
