"""posviz as an installed package: ``pip install .`` gives the library and the ``posviz``
command (``posviz --text ...``) with version ranges and without Streamlit; ``pip install
".[app]"`` adds Streamlit, and ``posviz app`` starts the app from any folder.
requirements.txt, the app's exact lock, pins versions inside those ranges.

The install test builds and installs the working tree with its app extra into a fresh virtual
environment that sees this interpreter's packages (no build isolation, no index: nothing is
downloaded, and pip checks the ranges against those packages), then runs everything from an
empty folder elsewhere, also with Streamlit hidden. "This interpreter's packages" are the ones on
its ``sys.path``: in a virtual environment (the README's set-up, most people's) that is the
venv's, not the base interpreter's, whose setuptools may be too old to build posviz.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
import urllib.request
from pathlib import Path

import numpy as np
import pytest
import setuptools
import websocket  # websocket-client
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version
from reference import book_window, token_ids

from devtools.server import free_port, stop_process, wait_healthy
from posviz.cli import app_command
from posviz_app.chart import CARTESIAN, GL3D

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _lock() -> dict[str, set[Version]]:
    """requirements.txt's exact pins: name -> every version it pins (both torch lines)."""
    pins: dict[str, set[Version]] = {}
    for line in (ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines():
        line = line.split("#")[0].strip()
        if line and not line.startswith("-"):
            requirement = Requirement(line)
            (specifier,) = requirement.specifier  # one exact pin per line
            assert specifier.operator == "==", line
            pins.setdefault(canonicalize_name(requirement.name), set()).add(
                Version(specifier.version)
            )
    return pins


def _ranges(extra: str | None = None) -> dict[str, SpecifierSet]:
    """pyproject.toml's dependencies (or an extra's): name -> its range."""
    project = PYPROJECT["project"]
    listed = project["optional-dependencies"][extra] if extra else project["dependencies"]
    return {
        canonicalize_name(requirement.name): requirement.specifier
        for requirement in map(Requirement, listed)
    }


@pytest.mark.parametrize("extra", [None, "app"], ids=["library", "app-extra"])
def test_the_lock_lies_in_the_packages_ranges(extra: str | None) -> None:
    """``pip install -r requirements.txt`` (the app's lock) then ``pip install .`` installs
    nothing more: every locked version lies in the package's range for it. The ranges are
    ranges (a library beside other packages), each with an upper bound."""
    lock, ranges = _lock(), _ranges(extra)
    for name, specifier in ranges.items():
        assert name in lock, f"{name} has a range in pyproject.toml but no pin in requirements.txt"
        outside = [str(v) for v in lock[name] if not specifier.contains(v, prereleases=True)]
        assert not outside, f"requirements.txt pins {name} {outside}, outside {specifier}"
        operators = {spec.operator for spec in specifier}
        assert "==" not in operators and "<" in operators and ">=" in operators, (name, specifier)


def test_the_library_needs_no_streamlit_and_the_lock_pins_nothing_else() -> None:
    library, app = _ranges(), _ranges("app")
    assert "streamlit" not in library and "streamlit" in app
    assert {"torch", "numpy", "plotly", "tiktoken", "huggingface-hub", "httpx2", "filelock"} <= set(
        library
    )
    assert set(_lock()) == set(library) | set(app)
    assert {str(v) for v in _lock()["torch"]} == {"2.13.0+cpu", "2.13.0"}


def test_posviz_app_without_streamlit_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "streamlit", None)  # find_spec: not installed
    with pytest.raises(SystemExit) as stopped:
        app_command([])
    assert stopped.value.code == 1
    assert 'pip install "posviz[app]"' in capsys.readouterr().err


def test_the_packaged_settings_are_the_repositorys() -> None:
    """``posviz app`` reads its Streamlit settings from the script's own folder; they must be
    the ones ``streamlit run app.py`` reads at the repository root."""
    packaged = ROOT / "posviz_app" / ".streamlit" / "config.toml"
    assert packaged.read_bytes() == (ROOT / ".streamlit" / "config.toml").read_bytes()


def test_everything_the_app_needs_is_package_data() -> None:
    data = PYPROJECT["tool"]["setuptools"]["package-data"]
    assert {
        "streamlit_app.py", ".streamlit/config.toml", "chart.js", "plotly_js/*", "nav.js",
        "nav.css", "page.css",
    } <= set(data["posviz_app"])  # fmt: skip
    assert (
        (ROOT / "posviz_app" / "streamlit_app.py")
        .read_text(encoding="utf-8")
        .endswith("from posviz_app.page import run\n\nrun()\n")
    )


def _packages_on_disk(root: Path) -> set[str]:
    """Every package below ``posviz`` and ``posviz_app`` in ``root``, by its ``__init__.py``."""
    return {
        ".".join(path.parent.relative_to(root).parts)
        for path in root.glob("posviz*/**/__init__.py")
    }


def test_every_package_is_found() -> None:
    """Packages are discovered, not listed: a new subpackage ships without an edit here."""
    find = PYPROJECT["tool"]["setuptools"]["packages"]["find"]
    assert find == {"include": ["posviz*", "posviz_app*"], "namespaces": False}
    found = setuptools.find_packages(str(ROOT), include=find["include"])
    assert set(found) == _packages_on_disk(ROOT) and {"posviz", "posviz_app"} <= set(found)


def test_posviz_app_runs_the_packaged_script_with_streamlit() -> None:
    command = app_command(["--server.port", "8502"])
    assert command[:4] == [sys.executable, "-m", "streamlit", "run"]
    assert Path(command[4]) == ROOT / "posviz_app" / "streamlit_app.py"
    assert command[5:] == ["--server.port", "8502"]


def _install(tmp_path: Path) -> Path:
    """The working tree, copied and installed into a fresh venv; its ``bin`` folder."""
    source = tmp_path / "source"
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout.splitlines()  # fmt: skip
    for name in listed:
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    # `--system-site-packages` would add the *base* interpreter's folder, also when this one
    # is a venv's: a .pth file adds exactly the folders this interpreter imports from.
    (site_packages,) = venv.glob("lib/python*/site-packages")
    (site_packages / "_posviz_test_parent.pth").write_text(
        "\n".join(_site_folders()) + "\n", encoding="utf-8"
    )
    # With its dependencies (the app's extra too), from no index: pip checks that this
    # interpreter's packages, the lock's versions, lie in the package's ranges.
    subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-index",
         "--no-build-isolation", f"{source}[app]"],
        check=True, timeout=300,
    )  # fmt: skip
    return venv / "bin"


def _site_folders() -> list[str]:
    """The folders this interpreter imports installed packages from, in its order."""
    return [p for p in sys.path if Path(p).name in ("site-packages", "dist-packages")]


def _refuses_rebinding(port: int) -> bool:
    """Whether the server refuses a websocket whose Host is not in ``server.allowedHosts``
    (one of the packaged settings; Streamlit's default accepts it)."""
    host = f"attacker.example:{port}"
    try:
        websocket.create_connection(
            f"ws://127.0.0.1:{port}/_stcore/stream",
            subprotocols=["streamlit"], origin=f"http://{host}", host=host, timeout=30,
        ).close()  # fmt: skip
    except websocket.WebSocketBadStatusException as error:
        return error.status_code == 403
    return False


@pytest.mark.slow
@pytest.mark.server
def test_installed_posviz_works_from_another_folder(tmp_path: Path) -> None:
    bin_dir = _install(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    where = subprocess.run(
        [str(bin_dir / "python"), "-c", "import posviz, posviz_app; print(posviz.__file__)"],
        cwd=elsewhere, env=env, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert str(tmp_path / "venv") in where, where  # the installed copy, not the repository's
    (site_packages,) = (tmp_path / "venv").glob("lib/python*/site-packages")
    assert _packages_on_disk(site_packages) == _packages_on_disk(ROOT)  # every subpackage

    # The library and its command without Streamlit (pip install . leaves it out): the
    # matrices still come, and `posviz app` says how to add the app's extra.
    no_streamlit = "import sys; sys.modules['streamlit'] = None; from posviz.cli import main; "
    subprocess.run(
        [str(bin_dir / "python"), "-c", no_streamlit + "sys.exit(main(sys.argv[1:]))",
         "--text", "Every effort", "--context-length", "2", "--npy", "bare.npy"],
        cwd=elsewhere, env=env, check=True, timeout=120,
    )  # fmt: skip
    assert np.load(elsewhere / "bare.npy").shape == (3, 2, 64)
    refused = subprocess.run(
        [str(bin_dir / "python"), "-c", no_streamlit + "sys.exit(main(['app']))"],
        cwd=elsewhere, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert refused.returncode == 1 and 'pip install "posviz[app]"' in refused.stderr, refused

    text = "Every effort moves you"
    subprocess.run(
        [str(bin_dir / "posviz"), "--text", text, "--context-length", "4", "--csv", "m.csv"],
        cwd=elsewhere, env=env, check=True, timeout=120,
    )  # fmt: skip
    subprocess.run(
        [str(bin_dir / "python"), "-m", "posviz", "--text", text, "--context-length", "4",
         "--npy", "m.npy"],
        cwd=elsewhere, env=env, check=True, timeout=120,
    )  # fmt: skip
    expected = book_window(
        "learned", seed=123, emb_dim=64, context_length=4, token_ids=token_ids(text)
    )
    np.testing.assert_array_equal(np.load(elsewhere / "m.npy"), np.stack(expected))
    rows = (elsewhere / "m.csv").read_text(encoding="utf-8").splitlines()
    assert (
        rows[0].startswith("matrix,position,token,token_id,token_shown,dim_0,")
        and len(rows) == 1 + 12
    )

    port = free_port()
    app = subprocess.Popen(
        [str(bin_dir / "posviz"), "app", "--server.port", str(port),
         "--server.address", "127.0.0.1"],
        cwd=elsewhere, env={**env, "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false"},
        stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    try:
        url = f"http://127.0.0.1:{port}"
        wait_healthy(url, app, timeout=120)
        from devtools.client import StreamlitSession

        session = StreamlitSession(url, timeout=120)
        try:
            run = session.open({"text": text, "context_length": "4"})
        finally:
            session.close()
        assert not run.errors, run.errors
        assert any("effort" in body for body in run.markdown), run.markdown
        # plotly.js's partial bundles come with the package, from the app's own file route.
        for build in (CARTESIAN, GL3D):
            with urllib.request.urlopen(f"{url}/{build.path}", timeout=60) as response:
                head = response.read(200).decode("utf-8")
            assert f"plotly.js ({build.name} - minified)" in head, head
        assert _refuses_rebinding(port), "posviz app ran without its packaged settings"
        # `posviz app` became the server (exec): stopping its PID stops Streamlit, no orphan.
        cmdline = Path(f"/proc/{app.pid}/cmdline").read_bytes().split(b"\0")
        assert b"streamlit" in cmdline and b"run" in cmdline, cmdline
    finally:
        stop_process(app)
    assert app.poll() is not None
