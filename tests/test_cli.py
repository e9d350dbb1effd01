"""``python -m posviz``: in-process through ``main(argv)``, and once as a real subprocess."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import pytest
import torch
from reference import (
    book_tables,
    book_window,
    centred_pca,
    cosines_by_distance,
    decode_array,
    same_up_to_sign,
    sinusoidal,
)

import posviz.cli
from devtools.fake_hub import COMMIT, Blob, FakeHub
from posviz.cli import main
from posviz.codegen import reproduction_script
from posviz.config import Settings
from posviz.presets import VERDICT_OPENING
from posviz.tokenizer import encode

ROOT = Path(__file__).resolve().parent.parent
ARGS = ["--text", VERDICT_OPENING, "--context-length", "4", "--emb-dim", "8", "--seed", "123"]


def verdict_window(window: int, *, context_length: int = 4, emb_dim: int = 8) -> list[torch.Tensor]:
    """Section 2.8 (tests/reference.py): token, positional and input rows of one window."""
    start = window * context_length
    ids = encode(VERDICT_OPENING)[start : start + context_length]
    return book_window(
        "learned", seed=123, emb_dim=emb_dim, context_length=context_length, token_ids=ids
    )


@pytest.fixture
def captured(monkeypatch: pytest.MonkeyPatch) -> list[go.Figure]:
    """The figures the CLI turns into HTML."""
    figures: list[go.Figure] = []
    real = posviz.cli.figure_html

    def spy(figure: go.Figure) -> bytes:
        figures.append(figure)
        return real(figure)

    monkeypatch.setattr(posviz.cli, "figure_html", spy)
    return figures


def test_html_holds_the_books_numbers(
    tmp_path: Path, captured: list[go.Figure], capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "fig.html"
    assert main([*ARGS, "--window", "2", "--out", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    assert page.lstrip().lower().startswith("<!doctype html>")
    assert "input embeddings = sum" in page
    (figure,) = captured
    for trace, expected in zip(figure.data, verdict_window(2), strict=True):
        assert np.array_equal(np.asarray(trace.z), expected.numpy())
    assert f"wrote {out}" in capsys.readouterr().err


def test_similarity_view(tmp_path: Path, captured: list[go.Figure]) -> None:
    out = tmp_path / "sim.html"
    assert main([*ARGS, "--view", "similarity", "--scheme", "none", "--out", str(out)]) == 0
    (figure,) = captured
    assert [np.asarray(t.z).shape for t in figure.data] == [(4, 4)] * 3
    assert figure.layout.coloraxis.cmin == -1.0
    assert np.all(np.asarray(figure.data[1].z) == 0.0)  # scheme none: no position signal
    assert "no positional signal" in figure.layout.annotations[1].text.replace("<br>", " ")


def test_csv_and_npy_hold_the_books_numbers(tmp_path: Path) -> None:
    csv_path, npy_path = tmp_path / "m.csv", tmp_path / "m.npy"
    assert main([*ARGS, "--window", "1", "--csv", str(csv_path), "--npy", str(npy_path)]) == 0
    array = np.load(npy_path, allow_pickle=False)
    expected = np.stack([m.numpy() for m in verdict_window(1)])
    assert np.array_equal(array, expected)
    lines = csv_path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1 + 3 * 4
    assert lines[1].startswith("token,0,")


def test_print_code_writes_only_the_script_to_stdout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    npy_path = tmp_path / "m.npy"
    argv = [*ARGS, "--stride", "3", "--window", "2", "--scheme", "rope"]
    assert main([*argv, "--print-code", "--npy", str(npy_path)]) == 0
    output = capsys.readouterr()
    settings = Settings(
        text=VERDICT_OPENING,
        context_length=4,
        emb_dim=8,
        seed=123,
        stride=3,
        window=2,
        scheme="rope",
    )
    assert output.out == reproduction_script(settings)
    assert "wrote" in output.err
    assert "wrote" not in output.out


def test_text_file(tmp_path: Path, captured: list[go.Figure]) -> None:
    source = tmp_path / "text.txt"
    source.write_text(VERDICT_OPENING, encoding="utf-8")
    out = tmp_path / "fig.html"
    argv = ["--text-file", str(source), "--context-length", "4", "--emb-dim", "8"]
    assert main([*argv, "--window", "3", "--out", str(out)]) == 0
    assert np.array_equal(np.asarray(captured[0].data[2].z), verdict_window(3)[2].numpy())


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        pytest.param(["--emb-dim", "1", "--print-code"], "emb_dim must be from 2 to 768", id="d"),
        pytest.param(["--emb-dim", "x", "--print-code"], "invalid int value: 'x'", id="not-int"),
        pytest.param(
            ["--context-length", "1025", "--print-code"], "from 1 to 1024, got 1025", id="T"
        ),
        pytest.param(["--scheme", "xpos", "--print-code"], "invalid choice: 'xpos'", id="scheme"),
        pytest.param(["--text", "a b", "--window", "3", "--print-code"], "window", id="window"),
        pytest.param(["--text", "  ", "--print-code"], "text is empty", id="empty"),
        pytest.param(["--text", "a"], "nothing to do", id="no-output"),
        pytest.param(["--out", "fig.svg"], "must end in .html, .json or .png", id="suffix"),
        pytest.param(["--text", "a", "--text-file", "t.txt"], "not allowed with", id="two-texts"),
        pytest.param(["--text-file", "/no/such/file", "--print-code"], "cannot read", id="file"),
        pytest.param(["--seed", "-1", "--print-code"], "seed must be from 0", id="seed"),
    ],
)
def test_bad_settings_exit_2_with_one_line(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    output = capsys.readouterr()
    assert output.out == ""
    assert output.err.count("\n") == 1
    assert output.err.startswith("python -m posviz: error: ")
    assert message in output.err


def test_unwritable_output_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([*ARGS, "--npy", str(tmp_path / "missing-dir" / "m.npy")])
    assert exit_info.value.code == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "No such file or directory" in err


def test_png_failure_names_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def no_kaleido(*args: object, **kwargs: object) -> bytes:
        raise ValueError('Image export using the "kaleido" engine requires the Kaleido package')

    monkeypatch.setattr(posviz.cli.pio, "to_image", no_kaleido)
    out = tmp_path / "fig.png"
    with pytest.raises(SystemExit) as exit_info:
        main([*ARGS, "--out", str(out)])
    assert exit_info.value.code == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "pip install kaleido==1.5.0" in err
    assert not out.exists()


@pytest.mark.slow
def test_png_is_written_with_kaleido_and_chromium(tmp_path: Path) -> None:
    if not Path("/usr/bin/chromium").exists() and not shutil.which("chromium"):
        pytest.skip("Chromium is not installed (kaleido needs a Chrome to draw PNG)")
    from PIL import Image

    out = tmp_path / "fig.png"
    assert main([*ARGS, "--out", str(out), "--width", "1200"]) == 0
    data = out.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    with Image.open(io.BytesIO(data)) as image:
        assert image.size[0] == 1200
        pixels = np.asarray(image.convert("RGB")).reshape(-1, 3)
    assert len(np.unique(pixels, axis=0)) > 50  # heatmaps, not a blank page


def test_python_dash_m_posviz_help_without_streamlit() -> None:
    """One real ``python -m posviz --help``; ``-X importtime`` lists every module it imported."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "posviz", "--help"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.startswith("usage: python -m posviz")
    for option in ("--context-length", "--emb-dim", "--scheme", "--out", "--print-code"):
        assert option in result.stdout
    imported = [line.rsplit("|", 1)[-1].strip() for line in result.stderr.splitlines()]
    assert "posviz.cli" in imported
    assert "torch" in imported
    assert not [name for name in imported if name.split(".")[0] == "streamlit"]


@pytest.mark.usefixtures("other_torch_fill")
def test_a_torch_that_fails_the_self_check_exits_1_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([*ARGS, "--seed", "424242", "--npy", str(tmp_path / "m.npy")])
    assert exit_info.value.code == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert f"torch {torch.__version__} fills nn.Embedding differently" in err
    assert "torch==2.13.0" in err
    assert not (tmp_path / "m.npy").exists()


# --- GPT-2's trained tables (a loopback stand-in with made-up tables, see conftest) --------


def test_fetch_gpt2_then_offline_npy_holds_the_served_rows(
    gpt2_hub: FakeHub,
    gpt2_blob: Blob,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["--fetch-gpt2"]) == 0
    err = capsys.readouterr().err
    assert "wte.weight (tokens): 100% of 154.4 MB" in err
    assert f"at commit {COMMIT} are in" in err
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # a lecture hall without network
    out = tmp_path / "gpt2.npy"
    text = "Hello world, hello world"
    assert main(["--weights", "gpt2", "--text", text, "--npy", str(out)]) == 0
    token_ids = encode(text)
    tokens = gpt2_blob.arrays["wte.weight"][token_ids]
    positions = gpt2_blob.arrays["wpe.weight"][: len(token_ids)]
    assert np.array_equal(np.load(out), np.stack([tokens, positions, tokens + positions]))
    capsys.readouterr()
    assert main(["--weights", "gpt2", "--text", text, "--print-code"]) == 0
    assert f"commit = '{COMMIT}'" in capsys.readouterr().out  # the script reads the same


def test_fetch_gpt2_positions_only(
    gpt2_hub: FakeHub, gpt2_blob: Blob, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--fetch-gpt2", "positions"]) == 0
    cache = Path(os.environ["POSVIZ_CACHE_DIR"])
    assert [p.name for p in cache.rglob("*.f32")] == ["wpe.weight.f32"]
    begin, end = gpt2_blob.offsets["wpe.weight"]
    assert gpt2_hub.cdn_bytes() == 100_000 + end - begin
    assert "GPT-2's positional table of openai-community/gpt2" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "words"),
    [
        pytest.param(["--scheme", "rope"], "with weights=gpt2 the scheme is learned", id="rope"),
        pytest.param(["--emb-dim", "64"], "emb_dim is GPT-2's 768", id="d64"),
    ],
)
def test_gpt2_with_other_scheme_or_d_is_a_usage_error(
    args: list[str], words: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["--weights", "gpt2", *args, "--csv", str(tmp_path / "x.csv")])
    assert caught.value.code == 2
    assert words in capsys.readouterr().err


def test_gpt2_offline_without_cache_exits_1_saying_how_to_fetch(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["--weights", "gpt2", "--csv", str(tmp_path / "x.csv")])
    assert caught.value.code == 1
    err = capsys.readouterr().err
    assert "not in the cache" in err and "python -m posviz --fetch-gpt2" in err
    assert not (tmp_path / "x.csv").exists()


def test_fetch_gpt2_offline_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["--fetch-gpt2"])
    assert caught.value.code == 1
    assert "cannot fetch GPT-2's tables: HF_HUB_OFFLINE is set" in capsys.readouterr().err


# --- compare mode ---------------------------------------------------------------------------

PAIR_ARGS = ["--text", "The dog bites the man", "--compare", "The man bites the dog"]


def test_compare_prints_the_cosines(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*PAIR_ARGS, "--emb-dim", "16"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "compare: 5 tokens, the same tokens reordered (scheme learned, no mask)"
    assert lines[1].startswith("cosine of the mean context vectors: no positions 1.000000 ")
    with_positions = float(lines[2].split("with positions ")[1].split()[0])
    assert with_positions < 0.9999995


def test_compare_with_causal_mask_and_print_code_keeps_stdout_for_the_script(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = [*PAIR_ARGS, "--emb-dim", "16", "--causal", "--print-code"]
    assert main(argv) == 0
    output = capsys.readouterr()
    settings = Settings(
        text="The dog bites the man",
        compare_text="The man bites the dog",
        emb_dim=16,
        causal=True,
    )
    assert output.out == reproduction_script(settings)
    assert "causal mask" in output.err
    no_positions = float(output.err.split("no positions ")[1].split()[0])
    assert no_positions < 0.999  # the mask alone breaks the symmetry


def test_compare_figure(tmp_path: Path, captured: list[go.Figure]) -> None:
    out = tmp_path / "compare.html"
    assert main([*PAIR_ARGS, "--emb-dim", "8", "--view", "compare", "--out", str(out)]) == 0
    (figure,) = captured
    assert [trace.type for trace in figure.data] == ["heatmap"] * 8


@pytest.mark.parametrize(
    ("argv", "status", "message"),
    [
        pytest.param(["--view", "compare", "--out", "x.html"], 2, "needs --compare", id="no-text"),
        pytest.param(
            ["--text", "The dog", "--compare", "x", "--view", "compare", "--out", "x.html"],
            1,
            "no compare figure: compare: not the same tokens",
            id="not-a-reordering",
        ),
    ],
)
def test_compare_errors(
    argv: list[str], status: int, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == status
    assert message in capsys.readouterr().err


# --- the Geometry and Distance views: Plotly JSON, against numpy -----------------------------


def _json_traces(path: Path) -> list[dict[str, object]]:
    """The traces of a Plotly JSON file (plotly reads it back), arrays decoded."""
    figure = pio.from_json(path.read_text(encoding="utf-8"), skip_invalid=False)
    traces = [trace.to_plotly_json() for trace in figure.data]
    for trace in traces:
        for key in ("x", "y", "z"):
            if key in trace:
                trace[key] = decode_array(trace[key])
    return traces


def test_geometry_view_writes_plotly_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "fig.json"
    assert main([*ARGS, "--context-length", "12", "--view", "geometry", "--out", str(out)]) == 0
    assert f"wrote {out}" in capsys.readouterr().err
    scatters = [t for t in _json_traces(out) if t["type"] == "scatter3d"]
    assert [t["name"] for t in scatters] == [
        "learned, random init (seed 123)",
        "sinusoidal (formula)",
    ]
    points = np.stack([np.asarray(scatters[0][axis], dtype=np.float64) for axis in "xyz"], axis=1)
    want, _ = centred_pca(book_tables(123, 8, 12)[1].numpy())
    assert same_up_to_sign(points, want, atol=1e-5)


def test_distance_view_writes_plotly_json(tmp_path: Path) -> None:
    out = tmp_path / "fig.json"
    args = [
        *ARGS,
        "--context-length",
        "10",
        "--view",
        "distance",
        "--beyond",
        "5",
        "--out",
        str(out),
    ]
    assert main(args) == 0
    lines = {t["name"]: t for t in _json_traces(out) if t.get("hovertemplate")}
    assert list(lines)[:2] == ["learned, random init (seed 123)", "sinusoidal (formula)"]
    mean, _, _ = cosines_by_distance(sinusoidal(15, 8).numpy())
    assert np.allclose(np.asarray(lines["sinusoidal (formula)"]["y"]), mean, atol=2e-6)


def test_every_view_writes_json(tmp_path: Path) -> None:
    for view in ("embeddings", "similarity"):
        out = tmp_path / f"{view}.json"
        assert main([*ARGS, "--view", view, "--out", str(out)]) == 0
        assert {t["type"] for t in _json_traces(out)} == {"heatmap"}


@pytest.mark.parametrize(
    ("args", "words"),
    [
        pytest.param(
            ["--beyond", "3", "--out", "x.json"], "--beyond is for --view distance", id="beyond"
        ),
        pytest.param(
            ["--view", "distance", "--beyond", "2000", "--out", "x.json"],
            "from 0 to 1024",
            id="far",
        ),
    ],
)
def test_shape_view_usage_errors(
    args: list[str], words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as caught:
        main([*ARGS, *args])
    assert caught.value.code == 2
    assert words in capsys.readouterr().err


# --- the lesson sentences ---------------------------------------------------------------------


@pytest.mark.parametrize("scheme", ["learned", "none"])
def test_lesson_prints_the_pages_sentences_with_their_numbers(
    scheme: str, capsys: pytest.CaptureFixture[str]
) -> None:
    text = "A rose is a rose is a rose."
    assert main(["--text", text, "--emb-dim", "8", "--scheme", scheme, "--lesson"]) == 0
    lesson, similarity = capsys.readouterr().out.splitlines()
    _, _, inputs = book_window(scheme, seed=123, emb_dim=8, context_length=16,
                               token_ids=encode(text))  # fmt: skip
    rose = inputs[[1, 4, 7]].double()
    difference = float((rose.max(dim=0).values - rose.min(dim=0).values).max())
    assert "'␣rose' is at positions 1, 4 and 7: its token rows are identical" in lesson
    if scheme == "none":
        assert difference == 0.0 and "its input rows are identical too" in lesson
    else:
        assert (
            f"its input rows differ (input panel, right: largest difference {difference:.2f})"
            in (lesson)
        )
    assert "5 pairs of positions read 1.000 in the token panel (left)" in similarity
    assert "**" not in lesson + similarity and "“" not in lesson, "plain text, not Markdown"


def test_help_names_every_out_suffix_and_the_train_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 42: ``--help`` said ``--out`` takes ".html or .png" (the README writes
    ``--out fig.json``) and never named ``posviz train``. Each suffix ``--out`` takes is named;
    one it refuses (a usage error, exit 2) is not."""
    with pytest.raises(SystemExit) as shown:
        main(["--help"])
    assert shown.value.code == 0
    said = " ".join(capsys.readouterr().out.split())  # argparse wraps the lines
    for suffix in (".html", ".htm", ".json", ".png"):
        assert suffix in said, suffix
    assert "posviz train" in said and "posviz app" in said
    with pytest.raises(SystemExit) as refused:
        main(["--out", str(tmp_path / "fig.svg")])
    assert refused.value.code == 2 and ".svg" not in said
