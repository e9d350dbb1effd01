"""``python -m posviz`` (or ``posviz`` once installed): the app's figure, matrices and code
for given settings, no Streamlit; ``posviz app`` starts the app itself.

Start the app from any folder (``pip install ".[app]"`` in the repository first: the app's
extra adds Streamlit; ``pip install .`` alone gives the library and this command)::

    posviz app                         # http://localhost:8501
    posviz app --server.port 8502      # any `streamlit run` option

Example (the book's section 2.8 batch, first window, as a page for slides)::

    python -m posviz --text "I HAD always thought Jack Gisburn rather a cheap genius" \\
        --context-length 4 --emb-dim 256 --seed 123 --stride 4 --window 0 \\
        --scheme learned --out fig.html

``--out`` writes ``.html`` (standalone, works offline), ``.json`` (the Plotly figure, for
``plotly.io.from_json``) or ``.png`` (needs kaleido 1.x and a Chrome or Chromium; kaleido
finds ``/usr/bin/chromium``, or set ``BROWSER_PATH``).
``--view NAME`` draws a view by its one name (:data:`posviz.viewspec.FIGURE_NAMES`, the names
links give the tabs): ``--view similarity`` the cosine-similarity view, not the embeddings;
``--view geometry`` the positional table's principal components beside a contrasting table
(:mod:`posviz.geometry`); ``--view distance`` the cosine of positions ``i`` and ``i + k`` per
scheme, ``--beyond E`` positions past the context length (:mod:`posviz.distance`);
``--view attention`` one head's content part, position part, scores and weights and the
scheme's bias against distance, ``--heads H --head K --shift M`` (:mod:`posviz.scores`;
with ``--lesson`` its sentences, with ``--print-code`` its script).
``--csv`` and ``--npy`` write the three matrices (see :mod:`posviz.export`), ``--print-code``
prints the reproduction script (see :mod:`posviz.codegen`) to standard output.
``--compare TEXT`` (compare mode, optionally ``--causal``) compares the window with a second
text through the book's self-attention and prints the numbers (to standard error when
``--print-code`` uses standard output); ``--view word-order`` draws its figure (``--view
compare``, its old name, still works and says so). ``--view training`` draws a training run
(``--run``, ``--step``, ``--components``); ``--view length`` train short, test long from the
shipped length runs (RoPE's extension: ``--rope-scaling``, ``--rope-factor``). ``--lesson``
prints the page's lesson sentences for the window, computed from its numbers (the repeated
tokens' rows, the similarity cells that read 1.000), the same way.

GPT-2 124M's trained tables instead of the book's random ones: ``--weights gpt2`` (d is 768,
the scheme learned). Before a lecture, fetch them into the cache (157 MB, once), so the app
works offline afterwards::

    python -m posviz --fetch-gpt2              # wte and wpe; --fetch-gpt2 positions: wpe only

The cache folder is ``POSVIZ_CACHE_DIR`` (default ``~/.cache/posviz``); ``HF_ENDPOINT`` points
at a Hub mirror; a Hub that cannot be reached, or a damaged download, exits with status 1.

Bad settings print one line to standard error and exit with status 2; a file that cannot be
written (or PNG without kaleido), damaged tokenizer files, and a torch that fails posviz's
self-check (:func:`posviz.embeddings.check_torch_fill`) exit with status 1. Messages about
written files go to standard error, so ``--print-code > script.py`` gives a clean script.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NoReturn

import plotly.graph_objects as go
import plotly.io as pio

from posviz.codegen import reproduction_script, shown_script
from posviz.config import (
    CONTEXT_LENGTH_RANGE,
    EMB_DIM_RANGE,
    GPT2_EMB_DIM,
    HEADS_RANGE,
    SCHEMES,
    SEED_RANGE,
    SHIFT_RANGE,
    WEIGHTS,
    Settings,
    SettingsError,
    for_weights,
    validate,
    with_options,
)
from posviz.distance import MAX_BEYOND, DistanceError
from posviz.embeddings import TorchFillError
from posviz.export import figure_html, figure_json, matrices_csv, matrices_npy
from posviz.gpt2.hub import HubError, HubFile, Progress
from posviz.gpt2.store import Gpt2Store
from posviz.lesson.attention import sentences as attention_sentences
from posviz.lesson.length import sentences as length_sentences
from posviz.lesson.repeats import lesson_sentence, similarity_sentence
from posviz.lesson.training import sentences as training_sentences
from posviz.lesson.word_order import summary_lines
from posviz.pipeline import EmbeddingTables
from posviz.plots.attention import attention_chart
from posviz.plots.heatmaps import (
    embeddings_chart,
    similarity_chart,
)
from posviz.plots.length import length_figure
from posviz.plots.training import COMPONENT_VIEWS
from posviz.schemes import OPTIONS, OptionValue, SchemeOption, scheme
from posviz.schemes import SCHEMES as SCHEME_SPECS
from posviz.scores import AttentionError, build_attention
from posviz.tokenizer import TokenizerDataError
from posviz.training.codegen import training_script
from posviz.training.command import train_main
from posviz.training.data import TrainingDataError
from posviz.training.length import shipped_length_runs
from posviz.training.length_view import build_length
from posviz.training.runs import RunError, load_named_run
from posviz.training.view import build_training
from posviz.view import TablesFor, build_view, build_word_order, seeded_tables
from posviz.viewspec import (
    FIGURE_NAMES,
    CodeName,
    Drawing,
    UnknownViewError,
    ViewSpec,
    renamed,
    view_named,
)

_PROG = "python -m posviz"
VIEWS = FIGURE_NAMES  # the views' one names (posviz.viewspec); old spellings are read too
_FIGURE_SUFFIXES = (".html", ".htm", ".json", ".png")
_APP_HELP = """usage: posviz app [streamlit run options]

Start posviz's app in the browser (Streamlit), from any folder: the same page as
`streamlit run app.py` in the repository, with its settings (posviz_app/.streamlit/config.toml).
Options are `streamlit run`'s, e.g. --server.port 8502 or --server.address 0.0.0.0.
"""
_PNG_WIDTH = 1600  # pixels: three panels side by side need a wide image
_PNG_HELP = (
    "PNG needs kaleido 1.x and Chrome or Chromium: `pip install kaleido==1.5.0`, and if no "
    "Chrome is found set BROWSER_PATH=/usr/bin/chromium (or write .html instead)"
)


class _Parser(argparse.ArgumentParser):
    """argparse, with every usage error on one line (and exit status 2)."""

    def error(self, message: str) -> NoReturn:
        """Print ``message`` as one line with a pointer to ``--help``; exit with status 2."""
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    """The command line, with the app's defaults and ranges in the help.

    >>> build_parser().parse_args(["--emb-dim", "256", "--print-code"]).emb_dim
    256
    """
    default = Settings()
    parser = _Parser(
        prog=_PROG,
        description="Write posviz's figure (token + position = input embeddings), its three "
        "matrices or the code that reproduces them, for given settings. No Streamlit needed.",
        epilog="Two commands of their own: `posviz app [streamlit options]` starts the app in "
        "the browser; `posviz train --init {small,default} --out NAME.npz` trains the book's "
        "GPT on The Verdict and keeps its positional table every few steps, for the Training "
        "view (`posviz train --help`).",
    )
    text = parser.add_mutually_exclusive_group()
    text.add_argument("--text", help=f"the text (default: {default.text!r})")
    text.add_argument("--text-file", type=Path, help="read the text from this UTF-8 file")
    parser.add_argument(
        "--context-length",
        type=int,
        default=default.context_length,
        help=f"T, {CONTEXT_LENGTH_RANGE[0]}-{CONTEXT_LENGTH_RANGE[1]} "
        f"(default {default.context_length})",
    )
    parser.add_argument(
        "--emb-dim",
        type=int,
        default=None,
        help=f"d, {EMB_DIM_RANGE[0]}-{EMB_DIM_RANGE[1]} (default {default.emb_dim}; "
        f"{GPT2_EMB_DIM} with --weights gpt2)",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=default.seed,
        help=f"torch.manual_seed, {SEED_RANGE[0]}-{SEED_RANGE[1]} (default {default.seed})",
    )
    parser.add_argument(
        "--stride", type=int, default=None, help="tokens between windows (default: T)"
    )
    parser.add_argument("--window", type=int, default=0, help="window of the batch (default 0)")
    parser.add_argument(
        "--scheme",
        choices=SCHEMES,
        default=None,
        help=f"positional scheme (default {default.scheme}; only learned with --weights gpt2)",
    )
    for spec in SCHEME_SPECS:  # each scheme's own options: --rope-base ...
        for declared in spec.options:
            parser.add_argument(
                declared.flag,
                dest=declared.name,
                type=_option_parser(declared),
                default=None,
                metavar=declared.name.rsplit("_", 1)[-1].upper(),
                help=f"--scheme {spec.name}: {declared.help.rstrip('.')} ({declared.allowed}; "
                f"default {declared.default_text})",
            )
    parser.add_argument(
        "--weights",
        choices=WEIGHTS,
        default=default.weights,
        help="init: the book's seeded random tables (default); gpt2: GPT-2 124M's trained "
        "wte and wpe from the Hugging Face Hub (downloaded once, then cached)",
    )
    parser.add_argument(
        "--fetch-gpt2",
        nargs="?",
        const="all",
        choices=("all", "positions"),
        help="download GPT-2's tables into the cache now, so the app works offline later "
        "(all: wte and wpe, 157 MB; positions: wpe only, 3 MB)",
    )
    parser.add_argument(
        "--gpt2-revision",
        default=None,
        help="branch, tag or commit of openai-community/gpt2 (default: "
        "POSVIZ_GPT2_REVISION, else main)",
    )
    parser.add_argument(
        "--view",
        type=_view_name,
        default="embeddings",
        metavar="{" + ",".join(VIEWS) + "}",
        help="the three embedding matrices, the cosine similarity between positions, the "
        "geometry of the positional table, similarity against distance per scheme, (with "
        "--compare) the two texts through self-attention, one attention head's scores and "
        "weights with the scheme's positions (--heads, --head, --shift), or a training run "
        "(--run, --step, --components); the names links give the tabs",
    )
    parser.add_argument(
        "--beyond",
        type=int,
        default=None,
        metavar="E",
        help=f"--view distance: positions past the context length, 0-{MAX_BEYOND} "
        "(default: a quarter of T)",
    )
    parser.add_argument(
        "--heads",
        type=int,
        default=None,
        metavar="H",
        help=f"--view attention: heads, {HEADS_RANGE[0]}-{HEADS_RANGE[1]}, dividing d "
        f"(default {default.heads})",
    )
    parser.add_argument(
        "--head",
        type=int,
        default=None,
        metavar="K",
        help=f"--view attention: the head shown, 0 to H-1 (default {default.head})",
    )
    parser.add_argument(
        "--shift",
        type=int,
        default=None,
        metavar="M",
        help=f"--view attention: move the sentence to positions M ... M+n-1, "
        f"{SHIFT_RANGE[0]}-{SHIFT_RANGE[1]} (default {default.shift})",
    )
    parser.add_argument(
        "--compare",
        metavar="TEXT",
        help="compare mode: a second text, the same words in another order",
    )
    parser.add_argument(
        "--causal", action="store_true", help="compare mode: mask future tokens, as GPT does"
    )
    parser.add_argument(
        "--run",
        default=None,
        help="--view training: the training run, by name (default small-init; the shipped "
        "runs and those `posviz train` wrote into the cache folder's runs/)",
    )
    parser.add_argument(
        "--step",
        type=int,
        default=None,
        help="--view training: a step the run kept (default its last)",
    )
    parser.add_argument(
        "--components",
        choices=COMPONENT_VIEWS,
        default=None,
        help="--view training: the principal components as PC 1 against PC 2 (2d, the "
        "default) or the first three in a 3-D scene (3d, the Geometry tab's view)",
    )
    parser.add_argument("--lecture", action="store_true", help="large fonts for a projector")
    parser.add_argument(
        "--out",
        type=Path,
        help=f"write the figure to this file: {', '.join(_FIGURE_SUFFIXES)} (standalone HTML, "
        "the Plotly figure as JSON, or PNG with kaleido)",
    )
    parser.add_argument(
        "--width", type=int, default=_PNG_WIDTH, help=f"PNG width in pixels (default {_PNG_WIDTH})"
    )
    parser.add_argument("--csv", type=Path, help="write the three matrices to this CSV file")
    parser.add_argument("--npy", type=Path, help="write the matrices [3, n, d] to this .npy")
    parser.add_argument(
        "--print-code", action="store_true", help="print a PyTorch script that reproduces them"
    )
    parser.add_argument(
        "--lesson",
        action="store_true",
        help="print what the matrices show about the repeated tokens, with their numbers",
    )
    return parser


def _view_name(raw: str) -> str:
    """``--view``'s value: a view's one name, or an old spelling of one (kept as given, so
    that :func:`main` can say the new name)."""
    try:
        view_named(raw, among=VIEWS)
    except UnknownViewError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return raw


def _option_parser(declared: SchemeOption) -> Callable[[str], OptionValue]:
    """The type of a scheme option's flag: its value, or its message naming value and range."""

    def parse(raw: str) -> OptionValue:
        try:
            return declared.parse(raw)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None

    return parse


def _fail(message: str) -> NoReturn:
    """A problem that is not a usage error: one line on stderr, exit status 1."""
    sys.stderr.write(f"{_PROG}: error: {message}\n")
    raise SystemExit(1)


def _settings(args: argparse.Namespace, parser: argparse.ArgumentParser) -> Settings:
    if args.text_file is not None:
        try:
            text = args.text_file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            parser.error(f"cannot read --text-file {str(args.text_file)!r}: {error}")
    else:
        text = Settings().text if args.text is None else args.text
    default = for_weights(Settings(), args.weights)  # gpt2: d 768, scheme learned
    settings = Settings(
        text=text,
        context_length=args.context_length,
        emb_dim=default.emb_dim if args.emb_dim is None else args.emb_dim,
        seed=args.seed,
        stride=args.stride,
        window=args.window,
        scheme=default.scheme if args.scheme is None else args.scheme,
        weights=args.weights,
        compare_text=args.compare or "",
        causal=args.causal,
        **{
            name: getattr(args, name)
            for name in ("heads", "head", "shift")
            if getattr(args, name) is not None
        },
    )
    options = {name: getattr(args, name) for name in OPTIONS if getattr(args, name) is not None}
    try:
        return validate(with_options(settings, **options))
    except SettingsError as error:
        parser.error(str(error))


def _progress_printer() -> Progress:
    """Download progress on standard error, every 10 % of each table."""
    printed: dict[int, int] = {}  # total -> last tenth printed

    def progress(done: int, total: int) -> None:
        tenth = 10 * done // total
        if printed.get(total, -1) < tenth:
            printed[total] = tenth
            table = "wte.weight (tokens)" if total > 10_000_000 else "wpe.weight (positions)"
            sys.stderr.write(f"{table}: {10 * tenth}% of {total / 1e6:.1f} MB\n")

    return progress


def _fetch(store: Gpt2Store, *, positions_only: bool) -> None:
    """``--fetch-gpt2``: ask the Hub for the revision's commit and download what is missing."""
    try:
        commit = store.fetch(positions_only=positions_only, progress=_progress_printer())
    except HubError as error:
        _fail(f"cannot fetch GPT-2's tables: {error}")
    sys.stderr.write(
        f"GPT-2's {'positional table' if positions_only else 'tables'} of "
        f"{store.source.repo_id} at commit {commit} are in {store.root}\n"
    )


def _tables(store: Gpt2Store) -> TablesFor:
    """The tables of a view: the book's seeded ones, or GPT-2's (downloaded if not cached)."""

    def tables(settings: Settings) -> EmbeddingTables:
        if settings.weights != "gpt2":
            return seeded_tables(settings)
        try:
            return store.tables(progress=_progress_printer())
        except HubError as error:
            _fail(str(error))

    return tables


def _training_view(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """``--view training``: a run's figure, its training script or its sentences."""
    if args.csv or args.npy or args.compare:
        parser.error("--view training draws a figure, its code or its lesson: not --csv, "
                     "--npy or --compare")  # fmt: skip
    gpt2 = _cached_gpt2(args)
    try:
        run = load_named_run(args.run or "small-init")
        view = build_training(run, run.steps[-1] if args.step is None else args.step, gpt2=gpt2)
    except (RunError, TrainingDataError) as error:
        parser.error(str(error))
    if args.print_code:
        sys.stdout.write(training_script(run.config, step=view.step, name=run.name))
    if args.lesson:
        report = sys.stderr if args.print_code else sys.stdout
        report.write("".join(f"{line}\n" for line in training_sentences(view)))
    if args.out is not None:
        drawing = Drawing(lecture=args.lecture, components=args.components or "2d", gpt2=gpt2)
        shown = Settings(run=run.name, train_step=view.step)
        figure = _figure(view_named("training"), shown, drawing)
        _write(args.out, _figure_bytes(figure, args.out, args.width))
    return 0


def _length_view(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """``--view length``: train short, test long from the shipped length runs (nothing is
    trained): its figure and its sentences (RoPE's extension: ``--rope-scaling``,
    ``--rope-factor``; the sentence past L: ``--text``)."""
    if args.csv or args.npy or args.compare:
        parser.error("--view length draws a figure, its lesson or its code: not --csv, --npy "
                     "or --compare")  # fmt: skip
    settings = _settings(args, parser)
    runs = shipped_length_runs()  # read once: the view's curves and --print-code's run
    try:
        view = build_length(settings, runs=runs)
    except SettingsError as error:
        parser.error(str(error))
    if args.print_code:  # the run of --scheme: it trains it and prints the sentence's numbers
        run = runs[scheme(settings.scheme).name]
        extension = (view.extension.scaling, view.extension.factor)
        sys.stdout.write(shown_script(run.config, extension))
    if args.lesson:
        report = sys.stderr if args.print_code else sys.stdout
        report.write("".join(f"{line}\n" for line in length_sentences(view)))
    if args.out is not None:
        figure = length_figure(view, lecture=args.lecture)
        _write(args.out, _figure_bytes(figure, args.out, args.width))
    return 0


def _figure(spec: ViewSpec, settings: Settings, drawing: Drawing) -> go.Figure:
    """The figure ``--out`` writes: the view's own, as the notebook and the registry draw it."""
    if spec.figure is None:  # --view takes FIGURE_NAMES only
        _fail(f"--view {spec.name} draws no figure")
    return spec.figure(settings, drawing)


def _cached_gpt2(args: argparse.Namespace) -> EmbeddingTables | None:
    """GPT-2's tables if the cache has them (never downloaded for the Training view)."""
    try:
        return Gpt2Store(source=HubFile.from_env(revision=args.gpt2_revision)).tables(
            download=False
        )
    except (HubError, ValueError):
        return None


def _figure_bytes(figure: go.Figure, out: Path, width: int) -> bytes:
    if out.suffix.lower() in (".html", ".htm"):
        return figure_html(figure)
    if out.suffix.lower() == ".json":
        return figure_json(figure)
    try:
        image: bytes = pio.to_image(figure, format="png", width=width)
    except Exception as error:  # kaleido missing, or no Chrome: say what to install
        first_line = (str(error).strip().splitlines() or [type(error).__name__])[0]
        _fail(f"cannot write PNG ({first_line}). {_PNG_HELP}")
    return image


def _write(path: Path, data: bytes) -> None:
    try:
        path.write_bytes(data)
    except OSError as error:
        _fail(f"cannot write {str(path)!r}: {error.strerror or error}")
    sys.stderr.write(f"wrote {path} ({len(data):,} bytes)\n")


def app_command(options: Sequence[str]) -> list[str]:
    """The ``streamlit run`` command line of ``posviz app``: the page's script as installed
    with posviz (:mod:`posviz_app`, found without importing it), then ``options``.

    >>> app_command(["--server.port", "8502"])[1:4]
    ['-m', 'streamlit', 'run']
    """
    spec = importlib.util.find_spec("posviz_app")
    if spec is None or spec.origin is None:
        _fail("the app (package posviz_app) is not installed: run `pip install .` in posviz")
    if importlib.util.find_spec("streamlit") is None:
        _fail(
            "posviz app needs Streamlit, which is not installed: install the app's extra, "
            '`pip install "posviz[app]"` (from the repository: `pip install ".[app]"`, or '
            "`pip install -r requirements.txt` for the exact versions the app is tested with)"
        )
    script = Path(spec.origin).with_name("streamlit_app.py")
    return [sys.executable, "-m", "streamlit", "run", str(script), *options]


def run_app(options: Sequence[str]) -> int:
    """``posviz app``: run the app until it stops; its exit status.

    On POSIX this process becomes Streamlit (``exec``), so a signal that stops ``posviz app``
    (Ctrl-C, a service manager's SIGTERM) stops the server itself and leaves no child behind.
    """
    if {"-h", "--help"} & set(options):
        sys.stdout.write(_APP_HELP)
        return 0
    command = app_command(options)
    if os.name == "posix":
        sys.stdout.flush()
        os.execv(command[0], command)
    return subprocess.call(command)  # Windows: no exec; Ctrl-C reaches both processes


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status (usage errors raise ``SystemExit(2)``).

    Example: ``main(["--text", "Every effort moves you", "--print-code"])`` prints the script
    and returns 0; ``main(["app"])`` runs the app.
    """
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == ["app"]:
        return run_app(arguments[1:])
    if arguments[:1] == ["train"]:
        return train_main(arguments[1:], parser_class=_Parser)
    parser = build_parser()
    args = parser.parse_args(arguments)
    note = renamed(args.view)
    if note is not None:
        sys.stderr.write(f"{_PROG}: note: --view {note}; it works, and will keep working\n")
    spec = view_named(args.view, among=VIEWS)
    args.view = spec.name
    outputs = args.out or args.csv or args.npy or args.print_code or args.compare or args.lesson
    if not (outputs or args.fetch_gpt2):
        parser.error(
            "nothing to do: give --out, --csv, --npy, --print-code, --compare, --lesson or "
            "--fetch-gpt2"
        )
    if args.view == "word-order" and not args.compare:
        parser.error("--view word-order needs --compare TEXT (the second text)")
    if args.out is not None and args.out.suffix.lower() not in _FIGURE_SUFFIXES:
        parser.error(f"--out must end in .html, .json or .png, got {str(args.out)!r}")
    if args.beyond is not None and args.view != "distance":
        parser.error("--beyond is for --view distance (positions past the context length)")
    attention_flags = [f"--{n}" for n in ("heads", "head", "shift") if getattr(args, n) is not None]
    if attention_flags and args.view != "attention":
        parser.error(f"{', '.join(attention_flags)}: for --view attention (one head's scores)")
    if not 100 <= args.width <= 10_000:
        parser.error(f"--width must be from 100 to 10000 pixels, got {args.width}")
    training_flags = args.run is not None or args.step is not None or args.components is not None
    if training_flags and args.view != "training":
        parser.error(
            "--run, --step and --components are for --view training (a training run's steps)"
        )
    if args.view == "training":
        return _training_view(args, parser)
    if args.view == "length":
        return _length_view(args, parser)
    settings = _settings(args, parser)
    try:
        store = Gpt2Store(source=HubFile.from_env(revision=args.gpt2_revision))
    except ValueError as error:  # HF_ENDPOINT not an http(s) URL, an empty revision
        parser.error(str(error))
    if args.fetch_gpt2:
        _fetch(store, positions_only=args.fetch_gpt2 == "positions")
        if not outputs:
            return 0
    try:
        view_tables = _tables(store)
        tables = view_tables(settings)  # looked up once, for the view and compare mode
        view = build_view(settings, strict=True, tables=lambda _: tables)
        window = view.embeddings
        if window is None:
            parser.error("the text is empty: give --text or --text-file")
        revision = store.cached_commit() or store.source.revision  # what the view read
        code_view: CodeName = "attention" if args.view == "attention" else "embeddings"
        code = (
            reproduction_script(settings, gpt2_revision=revision, view=code_view)
            if args.print_code
            else None
        )
        attention_view = (
            build_attention(view, tables=lambda _: tables)
            if args.view == "attention" and args.lesson
            else None
        )
        attention = (
            None
            if attention_view is None
            else attention_chart(attention_view, lecture=args.lecture)
        )
        comparison = (
            build_word_order(view, tables=lambda _: tables) if settings.compare_text else None
        )
        unordered = comparison is not None and comparison.with_positions is None
        drawing = Drawing(lecture=args.lecture, tables=lambda _: tables, beyond=args.beyond)
        figure = (
            _figure(spec, settings, drawing)
            if args.out is not None and not (args.view == "word-order" and unordered)
            else None
        )
    except (SettingsError, DistanceError, AttentionError) as error:
        parser.error(str(error))
    except (TokenizerDataError, TorchFillError) as error:  # damaged files, or another torch
        _fail(str(error))

    if code is not None:
        sys.stdout.write(code)
    report = sys.stderr if code is not None else sys.stdout
    if comparison is not None:
        report.write("".join(f"{line}\n" for line in summary_lines(comparison)))
    if args.lesson and attention_view is not None and attention is not None:
        lines = attention_sentences(attention_view, attention.decisions, markdown=False)
        report.write("".join(f"{line}\n" for line in lines))
    elif args.lesson:
        # The sentences of the figures --out draws (Canvas(): side by side).
        embeddings = embeddings_chart(window, lecture=args.lecture).decisions
        report.write(f"{lesson_sentence(embeddings, markdown=False)}\n")
        similarity = similarity_chart(window, lecture=args.lecture).decisions
        report.write(f"{similarity_sentence(similarity, markdown=False)}\n")
    if args.csv is not None:
        _write(args.csv, matrices_csv(window))
    if args.npy is not None:
        _write(args.npy, matrices_npy(window))
    if args.out is not None:
        if figure is None:  # --view word-order, and the second text is not a reordering
            _fail(f"no compare figure: {summary_lines(comparison)[0] if comparison else ''}")
        _write(args.out, _figure_bytes(figure, args.out, args.width))
    return 0
