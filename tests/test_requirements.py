"""``requirements.txt`` installs exactly what it pins, with uv's default settings (Streamlit
Community Cloud installs with uv first) and with pip, taking torch's CPU wheel from PyTorch's
page and every other pin from PyPI.

The test serves two stand-ins on 127.0.0.1 and rewrites the file's PyTorch address to its own:
a "PyPI" simple index with every pinned distribution (and newer releases beside them), and
a "PyTorch CPU index" (``/whl/cpu/``) that, like the real one, holds ``torch+cpu`` and also
numpy, filelock and typing-extensions at *other* versions. The wheels are metadata only
(name, version, Requires-Dist), built here; nothing is downloaded, and the machine's own pip
and uv settings (this machine's pip adds ``find-links`` and local extra indexes) are shut
out. uv's index strategy is its default (``first-index``: a package comes from the first index
that has any version of it, extra indexes before PyPI). The file posviz had before issue 43
(``--extra-index-url``) is a case of its own: uv must reject it, which shows the test can fail.
"""

from __future__ import annotations

import functools
import json
import os
import re
import subprocess
import sys
import threading
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import quote

import pytest
from uv import find_uv_bin

ROOT = Path(__file__).resolve().parent.parent
PYTORCH = "https://download.pytorch.org"  # requirements.txt's address, rewritten to the stand-in
# The file before issue 43: PyTorch's CPU index as an extra index. Under uv's defaults numpy
# (and filelock) would come from that index, which has them, but not at the pinned versions.
EXTRA_INDEX_REQUIREMENTS = """\
--extra-index-url https://download.pytorch.org/whl/cpu
torch==2.13.0+cpu ; sys_platform == "linux"
torch==2.13.0 ; sys_platform != "linux"
streamlit==1.67.0
plotly==7.1.0
tiktoken==0.14.0
numpy==2.4.6
huggingface_hub==2.4.0
httpx2==2.16.2
filelock==4.3.1
"""
PIN = re.compile(r"^([A-Za-z0-9_.-]+)==([^\s;#]+)\s*(?:;\s*(.*?))?\s*(?:#.*)?$")
# What the stand-in wheels depend on (the real ones depend on more; these are enough for
# torch's and Streamlit's dependencies to be looked up on both indexes).
REQUIRES = {
    "torch": ["filelock", "typing-extensions>=4.10.0"],
    "streamlit": ["numpy<3,>=1.23", "typing-extensions>=4.4.0"],
    "huggingface-hub": ["filelock", "httpx2", "typing-extensions>=4.1.0"],
}
TYPING_EXTENSIONS = "4.15.0"  # unpinned: the newest the stand-in PyPI has
# The PyTorch CPU index's other packages, at versions none of the pins has (checked below).
PYTORCH_ALSO = {
    "numpy": ["2.3.1", "2.1.2"],
    "filelock": ["3.20.0"],
    "typing-extensions": ["4.12.2"],
}


def _name(name: str) -> str:
    """PEP 503's normalised project name."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _marker_holds(marker: str | None) -> bool:
    """The only markers requirements.txt uses: ``sys_platform == / != "..."``."""
    if not marker:
        return True
    match = re.fullmatch(r'sys_platform\s*(==|!=)\s*"([^"]+)"', marker)
    if match is None:
        raise ValueError(f"marker {marker!r}: this test reads only sys_platform == / != markers")
    return (sys.platform == match[2]) == (match[1] == "==")


def pins(text: str) -> dict[str, str]:
    """Normalised name -> exact version of the file's ``name==version`` lines whose markers
    hold here (``torch`` -> ``2.13.0+cpu`` on Linux)."""
    found = {}
    for line in text.splitlines():
        match = PIN.match(line.strip())
        if match and _marker_holds(match[3]):
            found[_name(match[1])] = match[2]
    return found


def _all_pins(text: str) -> dict[str, set[str]]:
    """Every pinned version of each name, whatever the markers (both torch lines)."""
    found: dict[str, set[str]] = {}
    for line in text.splitlines():
        if match := PIN.match(line.strip()):
            found.setdefault(_name(match[1]), set()).add(match[2])
    return found


def _newer(version: str) -> str:
    """A release after ``version``: its minor number plus one (``2.4.6`` -> ``2.5.0``)."""
    major, minor, *_ = version.split("+")[0].split(".")
    return f"{major}.{int(minor) + 1}.0"


def _wheel(folder: Path, name: str, version: str) -> str:
    """Write a metadata-only wheel of ``name`` ``version`` into ``folder``; its file name."""
    stem = f"{re.sub(r'[-.]+', '_', name)}-{version}"
    filename = f"{stem}-py3-none-any.whl"
    info = f"{stem}.dist-info"
    metadata = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n" + "".join(
        f"Requires-Dist: {requirement}\n" for requirement in REQUIRES.get(_name(name), [])
    )
    wheel = "Wheel-Version: 1.0\nGenerator: posviz-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    folder.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(folder / filename, "w") as archive:
        archive.writestr(f"{info}/METADATA", metadata)
        archive.writestr(f"{info}/WHEEL", wheel)
        archive.writestr(f"{info}/RECORD", f"{info}/METADATA,,\n{info}/WHEEL,,\n{info}/RECORD,,\n")
    return filename


def _page(path: Path, links: dict[str, str]) -> None:
    """A PEP 503 page of ``text -> href`` links at ``path``/index.html."""
    path.mkdir(parents=True, exist_ok=True)
    body = "".join(f'<a href="{href}">{text}</a><br>\n' for text, href in links.items())
    (path / "index.html").write_text(f"<!DOCTYPE html>\n<html><body>\n{body}</body></html>\n")


def _index(root: Path, url_path: str, releases: dict[str, list[str]]) -> None:
    """A simple index at ``root``/``url_path``: a page per project listing its wheels, which
    lie in the index's folder (as PyTorch's do: ``/whl/cpu/torch-2.13.0%2Bcpu-...whl``)."""
    folder = root / url_path.strip("/")
    for name, versions in releases.items():
        files = [_wheel(folder, name, version) for version in versions]
        _page(folder / _name(name), {file: f"{url_path}/{quote(file)}" for file in files})
    _page(folder, {_name(name): f"{url_path}/{_name(name)}/" for name in releases})


@dataclass(frozen=True)
class StandIns:
    """The two indexes, served from ``root``; ``pypi`` is the stand-in PyPI's simple index
    and ``pytorch`` replaces ``https://download.pytorch.org`` in a requirements file."""

    root: Path
    pypi: str
    pytorch: str

    def requirements(self, text: str) -> Path:
        """``text`` with PyTorch's address pointing at the stand-in, as a file."""
        path = self.root / f"requirements-{len(list(self.root.glob('requirements-*')))}.txt"
        path.write_text(text.replace(PYTORCH, self.pytorch), encoding="utf-8")
        return path


def _build(root: Path) -> None:
    """Both stand-ins' files, from every version either requirements file pins."""
    pinned = _all_pins((ROOT / "requirements.txt").read_text(encoding="utf-8"))
    for name, versions in _all_pins(EXTRA_INDEX_REQUIREMENTS).items():
        pinned.setdefault(name, set()).update(versions)
    # PyPI: each pin (torch without its local label: PyPI's Linux torch is the CUDA build)
    # and a newer release of each, so a pin that is not honoured shows.
    pypi = {name: sorted({v.split("+")[0] for v in versions}) for name, versions in pinned.items()}
    for versions in pypi.values():
        versions.append(_newer(versions[-1]))
    pypi["typing-extensions"] = [TYPING_EXTENSIONS]
    _index(root, "/pypi/simple", pypi)
    # PyTorch's CPU index: torch+cpu (this release and an older one) and other packages at
    # versions no pin has.
    cpu = sorted(v for v in pinned["torch"] if v.endswith("+cpu"))
    assert cpu, "requirements.txt pins no torch ...+cpu"
    for name, versions in PYTORCH_ALSO.items():
        assert not set(versions) & pinned.get(name, set()), (name, versions)
    _index(root, "/whl/cpu", {"torch": ["2.12.0+cpu", *cpu], **PYTORCH_ALSO})


@pytest.fixture(scope="module")
def stand_ins(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandIns]:
    root = tmp_path_factory.mktemp("indexes")
    _build(root)

    class Handler(SimpleHTTPRequestHandler):
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, directory=str(root), **kwargs)  # type: ignore[arg-type]

        def log_message(self, format: str, *args: object) -> None:  # quiet
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield StandIns(root, f"{base}/pypi/simple", base)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def _isolated_env(tmp: Path) -> dict[str, str]:
    """This process's environment without pip's and uv's settings: no config file of the
    machine or the user (PIP_CONFIG_FILE=/dev/null, UV_NO_CONFIG), no PIP_* / UV_* variable,
    a cache of its own, no proxy for the stand-ins."""
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith(("PIP_", "UV_"))}
    no_proxy = ",".join(filter(None, [env.get("NO_PROXY", ""), "127.0.0.1"]))
    return env | {
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "PIP_RETRIES": "0",
        "UV_NO_CONFIG": "1",
        "UV_CACHE_DIR": str(tmp / "uv-cache"),
        "NO_PROXY": no_proxy,
        "no_proxy": no_proxy,
    }


@functools.cache
def _uv() -> str:
    return find_uv_bin()


def resolve_with_uv(stand_ins: StandIns, text: str, tmp: Path) -> dict[str, str]:
    """What ``uv pip compile`` (uv's defaults, the stand-in PyPI as its default index) picks
    for the file: name -> version. Raises CalledProcessError with uv's message if it cannot."""
    done = subprocess.run(
        [_uv(), "pip", "compile", str(stand_ins.requirements(text)), "--python", sys.executable,
         "--default-index", stand_ins.pypi, "--no-header", "--no-annotate", "--quiet"],
        env=_isolated_env(tmp), capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    return pins(done.stdout)


def resolve_with_pip(stand_ins: StandIns, text: str, tmp: Path) -> dict[str, str]:
    """What ``pip install --dry-run`` picks for the file: name -> version."""
    return _pip_dry_run(stand_ins, ["-r", str(stand_ins.requirements(text))], tmp)


def _pip_dry_run(stand_ins: StandIns, requirements: list[str], tmp: Path) -> dict[str, str]:
    """What ``pip install --dry-run`` picks for ``requirements``, from the stand-ins only
    (checked by the URL of every wheel it chose; a local project is built, without build
    isolation): name -> version."""
    report = tmp / "pip-report.json"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet",
         "--no-cache-dir", "--no-build-isolation", "--index-url", stand_ins.pypi,
         "--report", str(report), *requirements],
        env=_isolated_env(tmp), capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    chosen = json.loads(report.read_text(encoding="utf-8"))["install"]
    urls = [item["download_info"]["url"] for item in chosen]
    assert all(url.startswith((stand_ins.pytorch + "/", "file:")) for url in urls), urls
    return {_name(item["metadata"]["name"]): item["metadata"]["version"] for item in chosen}


RESOLVERS = {"uv": resolve_with_uv, "pip": resolve_with_pip}


def test_pip_reads_no_configuration_of_the_machine(tmp_path: Path) -> None:
    """The isolation the resolutions rest on: under it pip sees no configuration file and no
    PIP_ variable but the ones set here (this machine's pip.conf adds find-links and indexes)."""
    shown = subprocess.run(
        [sys.executable, "-m", "pip", "config", "debug"],
        env=_isolated_env(tmp_path), capture_output=True, text=True, timeout=60, check=True,
    ).stdout  # fmt: skip
    settings = [line.strip() for line in shown.splitlines() if re.match(r"\s+\S+\.\S+:", line)]
    assert settings == [], shown  # no "global.find-links: /opt/wheels" and the like
    variables = re.findall(r"PIP_[A-Z_]+", shown)
    assert set(variables) == {"PIP_CONFIG_FILE", "PIP_DISABLE_PIP_VERSION_CHECK", "PIP_RETRIES"}


@pytest.mark.slow
@pytest.mark.parametrize("installer", RESOLVERS)
def test_requirements_install_exactly_what_they_pin(
    installer: str, stand_ins: StandIns, tmp_path: Path
) -> None:
    text = (ROOT / "requirements.txt").read_text(encoding="utf-8")
    expected = pins(text)
    assert "torch" in expected and "numpy" in expected and "filelock" in expected
    if sys.platform == "linux":
        assert expected["torch"].endswith("+cpu")  # never PyPI's CUDA build
    resolved = RESOLVERS[installer](stand_ins, text, tmp_path)
    assert {name: resolved.get(name) for name in expected} == expected
    # An unpinned dependency of torch comes from PyPI too, not from PyTorch's index.
    assert resolved["typing-extensions"] == TYPING_EXTENSIONS


@pytest.mark.slow
def test_uv_rejects_the_extra_index_requirements(stand_ins: StandIns, tmp_path: Path) -> None:
    """The test's power: the file before issue 43 (PyTorch's index as an extra index) fails
    under uv's defaults, as it did on Community Cloud, because numpy is found on PyTorch's
    index first, but not at the pinned version. (pip took it: pip looks at every index.)"""
    with pytest.raises(subprocess.CalledProcessError) as failed:
        resolve_with_uv(stand_ins, EXTRA_INDEX_REQUIREMENTS, tmp_path)
    message = " ".join(failed.value.stderr.split())
    assert "numpy==2.4.6" in message and "not at the requested version" in message, message
    assert f"{stand_ins.pytorch}/whl/cpu" in message, message
    assert resolve_with_pip(stand_ins, EXTRA_INDEX_REQUIREMENTS, tmp_path) == pins(
        EXTRA_INDEX_REQUIREMENTS
    ) | {"typing-extensions": TYPING_EXTENSIONS}


def _project(tmp: Path) -> Path:
    """What pip reads the package's metadata from (pyproject.toml, the files it names and the
    two top packages), copied, so that building it writes nothing into the working tree."""
    copy = tmp / "posviz-source"
    for name in ("pyproject.toml", "README.md", "LICENSE", "posviz/data/LICENSE-GPT2",
                 "posviz/__init__.py", "posviz_app/__init__.py"):  # fmt: skip
        (copy / name).parent.mkdir(parents=True, exist_ok=True)
        (copy / name).write_bytes((ROOT / name).read_bytes())
    return copy


@pytest.mark.slow
def test_the_package_installs_without_streamlit_and_its_extra_with_it(
    stand_ins: StandIns, tmp_path: Path
) -> None:
    """``pip install posviz`` takes its dependencies' newest releases in range (the stand-in
    PyPI has a release after each pin) and no Streamlit; ``posviz[app]`` adds Streamlit and
    narrows plotly to the release whose plotly.js the app ships: the lock's versions."""
    source = _project(tmp_path)
    lock = pins((ROOT / "requirements.txt").read_text(encoding="utf-8"))
    library = _pip_dry_run(stand_ins, [str(source)], tmp_path)
    assert "streamlit" not in library, library
    assert library["numpy"] == _newer(lock["numpy"]) and library["plotly"] == _newer(lock["plotly"])
    app = _pip_dry_run(stand_ins, [f"{source}[app]"], tmp_path)
    assert app["streamlit"] == lock["streamlit"] and app["plotly"] == lock["plotly"], app
    assert {"posviz", "torch", "tiktoken", "huggingface-hub", "httpx2", "filelock"} <= set(app)
