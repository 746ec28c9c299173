"""Where a torch release's environment comes from: the target's index where it answers, else this machine's pip
configuration (uv reads none), this environment's own torch when it is the release asked; uv comes with reprokit."""

import functools
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from importlib import metadata
from pathlib import Path

import pytest
from reprokit.images.wheelhouse import index_reachable
from reprokit.run import env_cache, torch_envs


@pytest.fixture
def pip_config(tmp_path, monkeypatch):
    config = tmp_path / "pip.conf"
    config.write_text(
        "[global]\nindex-url = https://mirror.invalid/simple\nextra-index-url = file:///srv/a "
        "file:///srv/b\nfind-links = /srv/wheels\n"
    )
    monkeypatch.setenv("PIP_CONFIG_FILE", str(config))
    for name in ("PIP_FIND_LINKS", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL"):
        monkeypatch.delenv(name, raising=False)
    return config


def test_pip_configuration_becomes_uv_arguments(pip_config):
    args = torch_envs.pip_sources()
    assert args[args.index("--index-url") + 1] == "https://mirror.invalid/simple"
    assert [args[i + 1] for i, a in enumerate(args) if a == "--extra-index-url"] == ["file:///srv/a", "file:///srv/b"]
    assert args[args.index("--find-links") + 1] == "/srv/wheels"


@pytest.fixture
def local_index(tmp_path):
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(SimpleHTTPRequestHandler, directory=tmp_path))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()


def test_a_cpu_target_takes_its_own_index_where_it_answers_else_pips_configuration(pip_config, local_index):
    assert index_reachable(local_index)
    args, words = torch_envs.torch_sources("2.12.1", "cpu", local_index, None)
    assert args == ["--extra-index-url", local_index] and words == local_index
    closed = "http://127.0.0.1:9/whl/cpu"  # the discard port: nothing listens
    args, words = torch_envs.torch_sources("2.12.1", "cpu", closed, None)
    assert "--find-links" in args and args[-2:] == ["--index-strategy", "unsafe-best-match"]
    assert words == f"this machine's pip configuration ({closed} is not reachable from here)"
    # An accelerator target's index is its build: never replaced by pip's configuration.
    assert torch_envs.torch_sources("2.12.1", "cuda", closed, None)[0] == ["--extra-index-url", closed]


def test_this_environments_torch_is_reused_for_its_own_release(tmp_path, monkeypatch):
    monkeypatch.setenv("REPROKIT_CACHE", str(tmp_path))
    installed = metadata.version("torch")
    env = torch_envs.ensure(installed.split("+")[0], log=lambda line: None)
    assert env.setup_seconds == 0.0 and "this environment's own torch" in env.source
    assert not (tmp_path / "envs").exists()


def test_uv_comes_with_reprokit_and_envs_lists_and_frees_the_cache(tmp_path, monkeypatch):
    assert Path(env_cache.uv_binary()).exists()
    requires = metadata.requires("reprokit") or []
    assert any(r.split(">")[0].split("=")[0].strip() == "uv" for r in requires)
    monkeypatch.setenv("REPROKIT_CACHE", str(tmp_path))
    folder = tmp_path / "envs" / "torch-2.10.0"
    folder.mkdir(parents=True)
    (folder / "big").write_bytes(b"x" * 4096)
    assert env_cache.Row("2.10.0", 4096, 4096) in env_cache.listing()
    assert env_cache.remove(["2.10.0"]).counted == 4096 and not folder.exists()
