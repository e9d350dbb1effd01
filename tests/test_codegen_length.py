"""The Length view's *Show the code* (issue 41, item 4): the script trains the run as
``posviz train --scheme`` does and prints the band means it read.

Each script runs as a reader runs it: a fresh, isolated interpreter without posviz and
without network (GPT-2's files from an offline tiktoken cache, :mod:`reproduce`), the text
given as its argument. What it prints is compared with :func:`train_length` at the same
settings, computed here (1e-5, printed with 8 decimals; one torch thread sums in one order).
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest
from reproduce import ROOT, offline_env, run_beside_posviz

from posviz.codegen.length import SENTENCE_EXTENSIONS, length_script
from posviz.training.length import LengthConfig, LengthRun, train_length, variant_name

# A small model, a few steps, a few hundred tokens read: the run's code at a test's cost
SMALL = {"emb_dim": 16, "n_heads": 2, "n_layers": 1, "context_length": 8, "read_tokens": 300}
TEXTS = {
    "shakespeare": ROOT / "posviz" / "data" / "tinyshakespeare.txt",
    "verdict": ROOT / "posviz" / "data" / "the-verdict.txt",
}
# "held-out  yarn-4      4-7 of 8: 9.34867512 ± 0.03454512   8-15 of 16: ..."
ROW = re.compile(r"^(held-out|training) +(\S+(?: trained)?) +(.*)$")
CELL = re.compile(r"(\d+)-(\d+) of (\d+): (?:([\d.]+) ± ([\d.]+)|cannot run \((.*?)\))")


def _run(script: str, tmp_path: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    """``script`` in a fresh isolated interpreter, offline, without posviz."""
    path = tmp_path / "length_run.py"
    path.write_text(script, encoding="utf-8")
    return subprocess.run(
        [sys.executable, "-I", str(path), *arguments],
        cwd=tmp_path,
        env=offline_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _printed(stdout: str) -> dict[tuple[str, str, int], tuple[float, float] | str]:
    """(text, variant, length) → (mean, standard error) as printed, or the error's words."""
    found: dict[tuple[str, str, int], tuple[float, float] | str] = {}
    for line in stdout.splitlines():
        row = ROW.match(line)
        if row is None:
            continue
        text, variant, cells = row.groups()
        for first, last, length, mean, error, failed in CELL.findall(cells):
            assert (int(first), int(last)) == (int(length) // 2, int(length) - 1)
            key = (text, "" if variant == "as trained" else variant, int(length))
            found[key] = failed if failed else (float(mean), float(error))
    return found


def _expected(run: LengthRun, variants: set[str]) -> dict[tuple[str, str, int], object]:
    return {
        (r.text, r.variant, r.length): r.error or (r.band_mean, r.band_error)
        for r in run.readings
        if r.variant in variants
    }


@pytest.mark.slow
@pytest.mark.parametrize(
    ("scheme", "text"),
    [("rope", "shakespeare"), ("t5", "verdict")],
    ids=["rope-shakespeare", "t5-verdict"],
)
def test_the_script_prints_the_band_means_of_the_run(
    scheme: str, text: str, tmp_path: Path
) -> None:
    config = LengthConfig(scheme=scheme, text=text, steps=20, **SMALL)  # type: ignore[arg-type]
    result = _run(length_script(config), tmp_path, str(TEXTS[text]), "--digits", "8")
    assert result.returncode == 0, result.stderr[-3000:]
    printed = _printed(result.stdout)
    extensions = {variant_name(*extension) for extension in SENTENCE_EXTENSIONS}
    variants = {"", *extensions} if scheme == "rope" else {""}
    expected = _expected(train_length(config), variants)
    assert printed.keys() == expected.keys()
    assert len(printed) == 2 * 3 * len(variants)  # two texts, L, 2L, 4L, each variant
    for key, (mean, error) in expected.items():  # type: ignore[misc]
        assert printed[key] == pytest.approx((mean, error), abs=1e-5), key
    assert "step 20 of 20" in result.stderr  # the progress, kept off the numbers


def test_the_learned_table_prints_two_decimals_and_torchs_error(tmp_path: Path) -> None:
    config = LengthConfig(scheme="learned", text="verdict", steps=10, **SMALL)
    result = _run(length_script(config), tmp_path, str(TEXTS["verdict"]))
    assert result.returncode == 0, result.stderr[-3000:]
    printed = _printed(result.stdout)
    run = train_length(config)
    for reading in run.readings:
        shown = printed[reading.text, reading.variant, reading.length]
        if reading.error:  # 2L and 4L: the table has L rows
            assert shown == reading.error and shown.startswith("IndexError")
        else:
            assert shown == (round(reading.band_mean, 2), round(reading.band_error, 2))
    assert re.search(r"4-7 of 8: \d+\.\d\d ± \d\.\d\d   8-15 of 16: cannot run", result.stdout)


def test_the_script_refuses_a_text_that_is_not_the_runs(tmp_path: Path) -> None:
    config = LengthConfig(scheme="none", text="verdict", steps=1, **SMALL)
    other = tmp_path / "the-verdict.txt"
    other.write_text("Not the Verdict.", encoding="utf-8")
    result = _run(length_script(config), tmp_path, str(other))
    assert result.returncode != 0
    assert f"{other} has sha256" in result.stderr and "not the run's text" in result.stderr


@pytest.mark.slow
def test_beside_posviz_the_script_reads_its_text_and_tokenizer_without_importing_it(
    tmp_path: Path,
) -> None:
    """No argument, an empty tiktoken cache, no network: posviz's copies, found on the path."""
    config = LengthConfig(scheme="none", text="verdict", steps=2, **SMALL)
    (tmp_path / "length_run.py").write_text(length_script(config), encoding="utf-8")
    runner = (
        "import runpy, sys; sys.argv = ['length_run.py'];"
        "runpy.run_path('length_run.py', run_name='__main__'); print('posviz' in sys.modules)"
    )
    printed = run_beside_posviz(runner, tmp_path)
    assert printed.splitlines()[-1] == "False"
    assert len(_printed(printed)) == 6  # two texts at L, 2L, 4L
    assert not (tmp_path / "the-verdict.txt").exists()  # read where posviz keeps it


@pytest.mark.parametrize("scheme", ["learned", "sinusoidal", "none", "rope", "alibi", "t5"])
def test_the_script_needs_no_posviz(scheme: str) -> None:
    script = length_script(LengthConfig(scheme=scheme))  # type: ignore[arg-type]
    imported = set()
    for node in ast.walk(ast.parse(script)):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module.split(".")[0])
    assert "posviz" not in imported
    assert imported <= set(sys.stdlib_module_names) | {"torch", "tiktoken"}
    assert "steps = 3000" in script and "context_length=64," in script


def test_only_a_rotating_scheme_is_read_with_the_extensions() -> None:
    rope = length_script(LengthConfig(scheme="rope"), extensions=(("yarn", 2.0),))
    assert "extension_options('yarn', 2.0, context_length)" in rope
    assert "extension_options('ntk'" not in rope
    assert "variants.append(" not in length_script(LengthConfig(scheme="alibi"))


@pytest.mark.parametrize(
    ("extension", "words"),
    [(("yarn", 0.5), "rope_factor must be"), (("wide", 4.0), "rope_scaling must be")],
    ids=["factor", "scaling"],
)
def test_an_extension_rope_does_not_have_is_refused(
    extension: tuple[str, float], words: str
) -> None:
    with pytest.raises(ValueError, match=words):
        length_script(LengthConfig(scheme="rope"), extensions=(extension,))
