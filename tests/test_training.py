"""posviz.training: the book's GPT, its data, the training loop and the run file (issue 26).

The references are written in the tests or in ``reference.py`` (the book's init order, a
functional forward pass, the book's windows), never copied from posviz. The shipped runs are
checked against the command that made them: a retraining of their first steps must give
their snapshots (bit for bit on this machine; 1e-5 elsewhere).
"""

from __future__ import annotations

import dataclasses
import io
import json
import platform
import re
import zipfile
from pathlib import Path

import numpy as np
import pytest
import reference
import torch

from posviz.training.command import build_train_parser, config_from
from posviz.training.config import TrainingConfig, TrainingConfigError, validate_training
from posviz.training.data import (
    TextVocabulary,
    TrainingDataError,
    create_dataloader_v1,
    split_text,
    the_verdict,
)
from posviz.training.model import GPTConfig, GPTModel, init_positions
from posviz.training.runs import (
    RunError,
    available_runs,
    find_run,
    load_named_run,
    load_run,
    run_bytes,
    save_run,
    shipped_runs_dir,
)
from posviz.training.train import train

ROOT = Path(__file__).resolve().parent.parent
TINY = {"emb_dim": 16, "n_heads": 2, "n_layers": 1, "context_length": 16}  # a fast model
# The commands of posviz/training/command.py's docstring, which made the shipped runs.
SHIPPED = {
    "small-init": ["--init", "small", "--steps", "1500", "--seed", "123"],
    "default-init": ["--init", "default", "--steps", "1500", "--seed", "123"],
    "book-settings": ["--init", "default", "--steps", "1500", "--seed", "123", "--book-stride"],
}


# --- the text ---------------------------------------------------------------------------------


def test_the_verdict_is_the_books_text() -> None:
    """What the book prints about it: 20,479 characters, 5,145 GPT-2 tokens, 4,690 pieces and
    1,130 distinct ones by chapter 2's simple splitter."""
    text = the_verdict()
    assert text == reference.VERDICT.read_text(encoding="utf-8")
    assert len(text) == 20479
    assert len(reference.token_ids(text)) == 5145
    pieces = [p.strip() for p in re.split(r'([,.:;?_!"()\']|--|\s)', text) if p.strip()]
    assert (len(pieces), len(set(pieces))) == (4690, 1130)
    assert text.startswith("I HAD always thought Jack Gisburn rather a cheap genius")
    assert text.endswith("there's no exterminating our kind of art.\"")


def test_a_changed_text_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("posviz.training.data.VERDICT_SHA256", "0" * 64)
    with pytest.raises(TrainingDataError, match=r"sha256 .* expected 0{64}: the file was changed"):
        the_verdict()


def test_the_vocabulary_is_the_texts_tokens_in_id_order() -> None:
    train_text, val_text = split_text(the_verdict(), train_ratio=0.9)
    assert (len(train_text), len(val_text)) == (18431, 2048)  # int(0.9 * 20479)
    ids = set(reference.token_ids(train_text)) | set(reference.token_ids(val_text))
    vocabulary = TextVocabulary.from_texts((train_text, val_text))
    assert vocabulary.gpt2_ids == tuple(sorted(ids))
    assert vocabulary.vocab_size == 1417
    encoded = vocabulary.encode(val_text)
    assert [vocabulary.gpt2_ids[i] for i in encoded] == reference.token_ids(val_text)
    assert vocabulary.decode(encoded) == val_text
    with pytest.raises(TrainingDataError, match="not in this 1417-token vocabulary"):
        vocabulary.encode(" zebra xylophone")


def test_the_dataset_cuts_the_books_windows() -> None:
    train_text, _ = split_text(the_verdict(), train_ratio=0.9)
    vocabulary = TextVocabulary.from_texts([train_text])
    ids = vocabulary.encode(train_text)
    for stride in (1, 64):
        loader = create_dataloader_v1(
            train_text, batch_size=8, max_length=64, stride=stride, shuffle=False,
            drop_last=False, tokenizer=vocabulary,
        )  # fmt: skip
        got = [
            (inputs.tolist(), targets.tolist())
            for batch_inputs, batch_targets in loader
            for inputs, targets in zip(batch_inputs, batch_targets, strict=True)
        ]
        assert got == reference.sliding_windows(ids, 64, stride)
    assert len(reference.sliding_windows(ids, 64, 1)) == 4548


def test_iterating_a_loader_with_its_own_generator_leaves_the_global_one_alone() -> None:
    """The issue's finding: a DataLoader without a generator draws from the global one each
    time it is iterated, shuffled or not. posviz's loaders have their own."""
    text = "one two three four five six seven eight"
    vocabulary = TextVocabulary.from_texts([text])
    own = create_dataloader_v1(
        text, batch_size=2, max_length=2, stride=1, shuffle=False, tokenizer=vocabulary,
        generator=torch.Generator().manual_seed(0),
    )  # fmt: skip
    plain = create_dataloader_v1(
        text, batch_size=2, max_length=2, stride=1, shuffle=False, tokenizer=vocabulary
    )
    with torch.random.fork_rng(devices=[]):
        before = torch.get_rng_state()
        list(own)
        assert torch.equal(torch.get_rng_state(), before)
        list(plain)
        assert not torch.equal(torch.get_rng_state(), before)  # what the issue measured


# --- the model --------------------------------------------------------------------------------

CFG = GPTConfig(vocab_size=97, context_length=12, emb_dim=16, n_heads=4, n_layers=2)


def _model(seed: int = 123, cfg: GPTConfig = CFG) -> GPTModel:
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return GPTModel(cfg)


def test_seeded_init_is_the_books() -> None:
    """``torch.manual_seed(seed); GPTModel(cfg)`` makes the book's layers in the book's order."""
    state = {k: v for k, v in _model().state_dict().items() if not k.endswith(".mask")}
    want = reference.book_gpt_init(
        vocab_size=97, context_length=12, emb_dim=16, n_layers=2, seed=123
    )
    assert list(state) == list(want)
    for name, value in want.items():
        assert torch.equal(state[name], value), name


def test_the_forward_pass_is_chapter_4s() -> None:
    model = _model().eval()
    token_ids = torch.tensor([[5, 17, 3, 96, 0, 44, 44, 8], [1, 2, 3, 4, 5, 6, 7, 8]])
    with torch.no_grad():
        got = model(token_ids)  # [2, 8, 97]
    want = reference.gpt_logits(model.state_dict(), token_ids, n_heads=4)
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
    masks = [block.att.mask for block in model.trf_blocks]  # type: ignore[union-attr]
    assert all(torch.equal(m, torch.triu(torch.ones(12, 12), diagonal=1)) for m in masks)


def test_small_init_is_gpt2s_scale_of_the_same_draw() -> None:
    default, small = _model(), _model()
    init_positions(default, "default")
    init_positions(small, "small")
    assert torch.equal(small.pos_emb.weight, default.pos_emb.weight * 0.02)
    for (name, a), (_, b) in zip(
        default.state_dict().items(), small.state_dict().items(), strict=True
    ):
        if name != "pos_emb.weight":
            assert torch.equal(a, b), name
    with pytest.raises(ValueError, match="init must be one of small, default, got 'tiny'"):
        init_positions(small, "tiny")  # type: ignore[arg-type]


def test_heads_must_divide_the_dimension() -> None:
    with pytest.raises(ValueError, match=r"d_out \(16\) must be a multiple of num_heads \(3\)"):
        GPTModel(dataclasses.replace(CFG, n_heads=3))


# --- settings ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"init": "big"}, "init must be one of small, default, got 'big'"),
        ({"steps": 10**6}, "steps must be a whole number from 1 to 100000, got 1000000"),
        ({"steps": True}, "steps must be a whole number"),
        ({"stride": 65}, "stride must be a whole number from 1 to 64, got 65"),
        ({"n_heads": 3}, r"emb_dim \(128\) must be a multiple of n_heads \(3\)"),
        ({"learning_rate": float("nan")}, "learning_rate must be from 1e-08 to 1.0, got nan"),
        ({"threads": 0}, "threads must be a whole number from 1 to 256, got 0"),
    ],
    ids=["init", "steps", "bool-steps", "stride", "heads", "nan-lr", "threads"],
)
def test_settings_no_run_can_have_are_refused(change: dict[str, object], message: str) -> None:
    with pytest.raises(TrainingConfigError, match=message):
        validate_training(dataclasses.replace(TrainingConfig(init="small"), **change))


def test_the_command_line_gives_the_runs_settings() -> None:
    parser = build_train_parser()
    small = config_from(parser.parse_args([*SHIPPED["small-init"], "--out", "x.npz"]))
    assert small == TrainingConfig(init="small")
    book = config_from(parser.parse_args([*SHIPPED["book-settings"], "--out", "x.npz"]))
    assert book == TrainingConfig(init="default", stride=64)
    assert book.arguments() == tuple(SHIPPED["book-settings"])


# --- the loop ---------------------------------------------------------------------------------


def test_training_is_reproducible_and_leaves_the_caller_alone() -> None:
    config = TrainingConfig(init="small", steps=4, snapshot_every=2, threads=2, **TINY)
    torch.set_num_threads(1)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(5)
        state = torch.get_rng_state()
        first = train(config)
        assert torch.equal(torch.get_rng_state(), state)
    assert torch.get_num_threads() == 1
    second = train(config)
    assert torch.equal(first.pos_embeddings, second.pos_embeddings)
    assert torch.equal(first.batch_loss, second.batch_loss)
    assert torch.equal(first.val_loss, second.val_loss)
    assert first.steps == (0, 2, 4)
    windows = len(reference.sliding_windows(range(534), 16, 16))  # 534 validation tokens
    assert first.data.vocab_size == 1417 and first.data.val_windows == windows == 33


def test_evaluating_never_changes_the_training_and_a_short_run_is_a_prefix() -> None:
    """Evaluating every step or every 3rd, training 4 steps or 7: the common steps agree."""
    often = train(TrainingConfig(init="default", steps=4, snapshot_every=1, **TINY))
    rarely = train(TrainingConfig(init="default", steps=7, snapshot_every=3, **TINY))
    assert torch.equal(often.batch_loss, rarely.batch_loss[:4])
    for step in (0, 3):
        assert torch.equal(often.table(step), rarely.table(step))
        assert often.val_loss[often.index(step)] == rarely.val_loss[rarely.index(step)]


def test_the_first_step_is_chapter_5s_loop() -> None:
    """One step by hand, as the book writes it, from the same model, batch and optimiser."""
    config = TrainingConfig(init="small", steps=1, drop_rate=0.0, **TINY)
    run = train(config)
    train_text, val_text = split_text(the_verdict(), train_ratio=0.9)
    vocabulary = TextVocabulary.from_texts((train_text, val_text))
    windows = reference.sliding_windows(vocabulary.encode(train_text), 16, 1)
    # torch's DataLoader draws its base seed from the generator, then the sampler permutes
    generator = torch.Generator().manual_seed(123)
    torch.empty((), dtype=torch.int64).random_(generator=generator)
    order = torch.randperm(len(windows), generator=generator)
    inputs = torch.tensor([windows[i][0] for i in order[:8]])
    targets = torch.tensor([windows[i][1] for i in order[:8]])
    model = _model(123, config.model(1417))
    with torch.no_grad():
        model.pos_emb.weight.mul_(0.02)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.1)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # the run's threads: the same sums in the same order
    try:
        loss = torch.nn.functional.cross_entropy(model(inputs).flatten(0, 1), targets.flatten())
        loss.backward()
        optimizer.step()
    finally:
        torch.set_num_threads(threads)
    assert float(run.batch_loss[0]) == loss.item()
    assert torch.equal(run.table(1), model.pos_emb.weight.detach())


# --- the run file -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_run() -> object:
    return dataclasses.replace(
        train(TrainingConfig(init="small", steps=3, snapshot_every=2, **TINY)), name="tiny"
    )


def test_a_run_file_round_trips_and_its_bytes_are_the_runs(tiny_run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "tiny.npz"
    size = save_run(tiny_run, path)
    assert size == path.stat().st_size
    assert path.read_bytes() == run_bytes(tiny_run)  # no date, no order that varies
    loaded = load_run(path)
    assert loaded.name == "tiny" and loaded.config == tiny_run.config
    assert loaded.steps == (0, 2, 3) and loaded.data == tiny_run.data
    for name in ("pos_embeddings", "train_loss", "val_loss", "batch_loss"):
        assert torch.equal(getattr(loaded, name), getattr(tiny_run, name)), name
    with np.load(path, allow_pickle=False) as archive:  # plain arrays, no pickle
        meta = json.loads(archive["metadata"].tobytes())
    assert meta["command"] == ["posviz", "train", *tiny_run.config.arguments()]
    assert (meta["torch"], meta["cpu"]) == (torch.__version__, tiny_run.cpu)
    assert tiny_run.same_machine


def test_a_run_records_the_kernels_and_the_cpu_vendor_that_trained_it(tiny_run) -> None:  # type: ignore[no-untyped-def]
    """An Intel and an AMD CPU both on AVX512 give other bits (seen): the run names both."""
    vendors = [
        line.split(":", 1)[1].strip()
        for line in Path("/proc/cpuinfo").read_text(errors="replace").splitlines()
        if line.startswith("vendor_id")
    ]
    kernels = str(torch.backends.cpu.get_cpu_capability())
    assert tiny_run.cpu == f"{kernels} {vendors[0] if vendors else platform.machine()}"
    other = dataclasses.replace(tiny_run, cpu=f"{kernels} SomeOtherVendor")
    assert not other.same_machine


def _rewrite(path: Path, **arrays: np.ndarray) -> None:
    with np.load(path, allow_pickle=False) as archive:
        kept = {k: archive[k] for k in archive.files}
    kept.update(arrays)
    np.savez(path, **kept)  # type: ignore[arg-type]


def _meta(path: Path) -> dict[str, object]:
    with np.load(path, allow_pickle=False) as archive:
        return json.loads(archive["metadata"].tobytes())  # type: ignore[no-any-return]


def _encoded(meta: dict[str, object]) -> np.ndarray:
    return np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)


@pytest.mark.parametrize(
    "damage",
    ["not-a-zip", "pickled", "missing", "shape", "nan", "format", "version", "config", "steps"],
)
def test_a_damaged_run_file_is_refused_with_its_name(tiny_run, tmp_path: Path, damage: str) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "damaged.npz"
    save_run(tiny_run, path)
    meta = _meta(path)
    if damage == "not-a-zip":
        path.write_bytes(b"PK\x03\x04 not really")
    elif damage == "pickled":
        _rewrite(path, steps=np.array([0, 2, 3], dtype=object))
    elif damage == "missing":
        with np.load(path, allow_pickle=False) as archive:
            np.savez(path, **{k: archive[k] for k in archive.files if k != "val_loss"})
    elif damage == "shape":
        _rewrite(path, pos_embeddings=np.zeros((3, 16, 15), dtype=np.float32))
    elif damage == "nan":
        _rewrite(path, val_loss=np.array([1.0, np.nan, 2.0]))
    elif damage == "format":
        _rewrite(path, metadata=_encoded({**meta, "format": "other"}))
    elif damage == "version":
        _rewrite(path, metadata=_encoded({**meta, "version": 99}))
    elif damage == "config":
        config = {**meta["config"], "stride": 99}  # type: ignore[dict-item]
        _rewrite(path, metadata=_encoded({**meta, "config": config}))
    else:
        _rewrite(path, steps=np.array([0, 1, 3], dtype=np.int64))
    with pytest.raises(RunError, match=f"{re.escape(str(path))} is not a posviz training run"):
        load_run(path)


def test_runs_are_found_by_name_in_the_shipped_folder_then_the_cache(
    tiny_run,  # type: ignore[no-untyped-def]
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("POSVIZ_CACHE_DIR", str(tmp_path))
    (tmp_path / "runs").mkdir()
    save_run(tiny_run, tmp_path / "runs" / "mine.npz")
    save_run(tiny_run, tmp_path / "runs" / "small-init.npz")  # shadowed by the shipped one
    (tmp_path / "runs" / "..hidden.npz").write_bytes(b"")  # not a name a run can have
    runs = available_runs()
    assert sorted(runs) == ["book-settings", "default-init", "mine", "small-init"]
    assert runs["small-init"].parent == shipped_runs_dir()
    assert load_named_run("mine").config == tiny_run.config
    for name in ("nothing", "../runs/mine", "mine.npz", "small-init/../mine"):
        with pytest.raises(RunError) as raised:
            find_run(name)
        message = str(raised.value)
        assert "the runs are book-settings, default-init, mine, small-init" in message
        assert f"{tmp_path / 'runs'}" in message and "python -m posviz train" in message
        assert "../" not in message.split(":")[0]  # a path-like name is not echoed


# --- the shipped runs -------------------------------------------------------------------------


def test_the_shipped_runs_are_the_commands_runs_and_small() -> None:
    parser = build_train_parser()
    sizes = {}
    for name, arguments in SHIPPED.items():
        run = load_named_run(name)
        assert run.config == config_from(parser.parse_args([*arguments, "--out", "x.npz"]))
        assert run.steps == tuple(range(0, 1501, 50))
        assert run.data.vocab_size == 1417
        sizes[name] = (shipped_runs_dir() / f"{name}.npz").stat().st_size
    assert sizes["small-init"] + sizes["default-init"] <= 3_000_000
    assert sum(sizes.values()) <= 3_300_000
    with zipfile.ZipFile(io.BytesIO((shipped_runs_dir() / "small-init.npz").read_bytes())) as z:
        assert {info.date_time for info in z.infolist()} == {(1980, 1, 1, 0, 0, 0)}


@pytest.mark.slow
@pytest.mark.parametrize(("name", "steps"), [("small-init", 300), ("default-init", 100),
                                             ("book-settings", 100)])  # fmt: skip
def test_the_shipped_runs_reproduce_from_the_command(name: str, steps: int) -> None:
    """Retrain the first steps with the shipped settings: the same snapshots and losses (bit
    for bit with the same torch and CPU; within 1e-5 on another machine). small-init, whose
    structure the view quotes, for its first 300 steps (7 snapshots, ~26 s here), the others
    for 100."""
    shipped = load_named_run(name)
    config = dataclasses.replace(shipped.config, steps=steps)
    again = train(config)
    for step in again.steps:
        got, want = again.table(step), shipped.table(step)
        torch.testing.assert_close(got, want, rtol=0, atol=1e-5)
        index = shipped.index(step)
        assert abs(float(again.val_loss[again.index(step)]) - float(shipped.val_loss[index])) < 1e-5
        assert (
            abs(float(again.train_loss[again.index(step)]) - float(shipped.train_loss[index]))
            < 1e-5
        )
    torch.testing.assert_close(again.batch_loss, shipped.batch_loss[:steps], rtol=0, atol=1e-5)
    if shipped.same_machine:  # the torch and CPU kind that trained them: the same bits
        assert torch.equal(again.pos_embeddings, shipped.pos_embeddings[: len(again.steps)])
        assert torch.equal(again.batch_loss, shipped.batch_loss[:steps])
