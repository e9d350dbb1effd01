"""posviz.gpt2 against the real Hugging Face Hub: opt-in, never in CI.

    POSVIZ_LIVE_HUB=1 python -m pytest -q -p no:cacheprovider tests/test_gpt2_live.py

Fetches only ``wpe.weight`` (3 MB) of ``openai-community/gpt2`` into a temporary cache and
checks its shape, dtype and sha256. The reference comes from ``huggingface_hub`` alone: its
``get_safetensors_metadata`` reads the header (offsets, dtype, shape) and one plain Range GET
on its session reads the same bytes, so the check does not share posviz's reader. Skipped
unless ``POSVIZ_LIVE_HUB=1`` is set, and always when ``CI`` is set.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
import torch

from posviz.gpt2.hub import DEFAULT_ENDPOINT, GPT2_FILE, GPT2_REPO, HubFile
from posviz.gpt2.store import WPE, Gpt2Store

pytestmark = pytest.mark.skipif(
    os.environ.get("POSVIZ_LIVE_HUB") != "1" or bool(os.environ.get("CI")),
    reason="reaches the real Hugging Face Hub: set POSVIZ_LIVE_HUB=1 (never in CI)",
)


def test_wpe_from_the_real_hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from huggingface_hub import constants, get_safetensors_metadata, get_session, hf_hub_url

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)  # conftest starts it offline
    store = Gpt2Store(
        cache_dir=tmp_path / "cache", source=HubFile(endpoint=DEFAULT_ENDPOINT, offline=False)
    )
    positions = store.positions()
    assert positions.shape == (1024, 768) and positions.dtype == torch.float32
    commit = store.cached_commit()
    assert commit is not None and len(commit) == 40

    metadata = get_safetensors_metadata(GPT2_REPO, revision=commit)
    info = metadata.files_metadata[GPT2_FILE].tensors["wpe.weight"]
    assert (info.dtype, tuple(info.shape)) == (WPE.dtype, WPE.shape)
    header = get_session().get(
        hf_hub_url(GPT2_REPO, GPT2_FILE, revision=commit),
        headers={"Range": "bytes=0-7"},
        follow_redirects=True,
    )
    data_start = 8 + int.from_bytes(header.content[:8], "little")
    begin, end = (data_start + offset for offset in info.data_offsets)
    answer = get_session().get(
        hf_hub_url(GPT2_REPO, GPT2_FILE, revision=commit),
        headers={"Range": f"bytes={begin}-{end - 1}"},
        follow_redirects=True,
    )
    assert answer.status_code == 206
    want = hashlib.sha256(answer.content).hexdigest()
    cached = store.root / commit / WPE.file_name
    assert hashlib.sha256(cached.read_bytes()).hexdigest() == want
    assert torch.equal(
        positions, torch.frombuffer(bytearray(answer.content), dtype=torch.float32).view(1024, 768)
    )
