"""``cefisim`` as CI scripts use it: --version, shipped scenarios by name, CEFISIM_* variables,
--port 0 with --ready-file, a port in use, the access log and GET /_sim/requests."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import jsonschema
import orjson
import pytest
from aiohttp import web

from cefisim import __version__
from cefisim.api.cli.common.cli_env import document, env_defaults, env_name
from cefisim.api.cli.event_loop import loop_factory, loop_name
from cefisim.api.cli.main import _serve_parser, main
from cefisim.api.edge.signing import sign
from cefisim.api.formats.scenario.shipped import resolve, shipped, shipped_dir, shipped_names
from cefisim.api.web.server import listen
from tests.api.conftest import ALICE_KEY, scenario_doc
from tests.api.served import wait_for_ready_file


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cefisim")
    serve = _serve_parser(parser.add_subparsers(dest="command"))
    document(serve)
    return serve


def _parse(environ: dict[str, str], *argv: str) -> argparse.Namespace:
    serve = _parser()
    env_defaults(serve, environ)
    return serve.parse_args(list(argv))


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.strip() in (f"cefisim {__version__} (pure)", f"cefisim {__version__} (compiled)")


def test_the_shipped_scenarios_are_listed_and_found_by_name(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scenarios"]) == 0
    out = capsys.readouterr().out
    listed, legend = out.split("\n\n")
    assert {line.split()[0] for line in listed.splitlines()} == set(shipped_names()) >= {"demo", "flash_crash"}
    assert "three instruments" in out
    # the scenarios cefisim_client can sign in are marked
    signing = {line.split()[0] for line in listed.splitlines() if line.split()[1] == "[keys]"}
    assert signing == {"demo", "population", "recorded_busy"} and legend.startswith("[keys]: ")
    assert resolve(None) == resolve("demo") == resolve("demo.json") == shipped_dir() / "demo.json"
    assert resolve("nope") == Path("nope") and shipped("nope") is None


def test_every_serve_option_reads_its_environment_variable_and_a_flag_wins() -> None:
    serve = _parser()
    options = [a for a in serve._actions if a.option_strings and a.dest != "help"]
    assert len(options) > 20
    for action in options:  # listed in --help
        assert f"[env {env_name(action)}]" in (action.help or ""), action.dest
    env = {
        "CEFISIM_PORT": "0",
        "CEFISIM_HOST": "0.0.0.0",
        "CEFISIM_SCENARIO": "flash_crash",
        "CEFISIM_CLOCK": "virtual",
        "CEFISIM_QUIET": "yes",
        "CEFISIM_SIGN_REFERENCE_DATA": "off",
        "CEFISIM_RATE_LIMIT": "20:40, k-bob=off",
        "CEFISIM_MAX_OPEN_ORDERS": "none",
    }
    args = _parse(env)
    assert (args.port, args.host, args.scenario, args.clock, args.quiet) == (
        0,
        "0.0.0.0",
        "flash_crash",
        "virtual",
        True,
    )
    assert args.sign_reference_data is False and args.rate_limit == ["20:40", "k-bob=off"]
    assert args.max_open_orders is None
    flags = _parse(env, "--port", "9000", "--clock", "wall", "--rate-limit", "5")
    assert (flags.port, flags.clock, flags.rate_limit) == (9000, "wall", ["5"])
    assert _parse({}).port == 8080


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("CEFISIM_PORT", "http"),
        ("CEFISIM_CLOCK", "sundial"),
        ("CEFISIM_QUIET", "perhaps"),
        ("CEFISIM_RATE_LIMIT", "fast"),
    ],
)
def test_a_bad_environment_value_is_a_usage_error_naming_the_variable(
    name: str, value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        _parse({name: value})
    assert exit_.value.code == 2
    assert f"{name}: " in capsys.readouterr().err


@pytest.mark.parametrize("value", ["-5", "0", "\u0661\u0660", "65536.5"])
def test_a_bad_max_body_bytes_is_a_usage_error(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Every other number a flag takes is checked; a negative body limit used to start a server."""
    with pytest.raises(SystemExit) as exit_:
        _parse({}, "--max-body-bytes", value)
    assert exit_.value.code == 2
    assert "--max-body-bytes" in capsys.readouterr().err


def test_a_port_in_use_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = tmp_path / "s.json"
    scenario.write_bytes(orjson.dumps(scenario_doc()))
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert main(["serve", "--port", str(port), "--scenario", str(scenario), "--clock", "virtual"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"cefisim: cannot listen on 127.0.0.1:{port}: ") and "\n" not in err
    assert "in use" in err


def test_the_server_serves_with_a_short_thread_switch_interval_and_gives_it_back(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A thread the server runs (a venue being created) must let the event loop have the GIL back within
    a millisecond, not Python's 5 ms at every wake-up of the loop (docs/benchmarks.md, bench_tenants)."""
    seen: list[float] = []
    app = web.Application()

    async def record(_: web.Application) -> None:
        seen.append(sys.getswitchinterval())

    app.on_startup.append(record)
    before = sys.getswitchinterval()
    with socket.socket() as busy:  # the app starts, then the port cannot be bound: run returns at once
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        assert listen.run(app, "127.0.0.1", busy.getsockname()[1], lambda url: None) == 2
    assert "cannot listen" in capsys.readouterr().err
    assert seen == [listen.SWITCH_INTERVAL_S] and listen.SWITCH_INTERVAL_S <= 0.001 < before
    assert sys.getswitchinterval() == before


@contextmanager
def serving(tmp_path: Path, *argv: str) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """``python -m cefisim serve --port 0 --ready-file ...``; yields the URL it wrote and the process."""
    ready = tmp_path / "ready.json"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "cefisim",
            "serve",
            "--port",
            "0",
            "--ready-file",
            str(ready),
            "--clock",
            "virtual",
            *argv,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "CEFISIM_SCENARIO": "demo"},
    )
    try:
        info = wait_for_ready_file(ready, proc, 30)
        assert info["pid"] == proc.pid
        yield info["url"], proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    assert not ready.exists()  # removed on the way out


def _get(url: str, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=10) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def _signed(path: str) -> dict[str, str]:
    ts = str(int(time.time()))
    return {
        "x-svc-auth-token": ALICE_KEY,
        "x-svc-auth-signature": sign("alice-secret", ts, "GET", path, b""),
        "x-svc-auth-timestamp": ts,
        "x-svc-auth-userid": "100",
    }


def test_port_0_ready_file_access_log_and_recent_requests(tmp_path: Path) -> None:
    with serving(tmp_path) as (url, proc):
        port = int(url.rsplit(":", 1)[1])
        assert url == f"http://127.0.0.1:{port}" and port != 0
        assert _get(url + "/v1/cefi/balances", {**_signed("/v1/cefi/balances"), "X-Request-Id": "r-1"})[0] == 200
        assert _get(url + "/v1/cefi/balances")[0] == 401
        status, body = _get(url + "/_sim/requests?limit=1")
        assert status == 200
        (last,) = json.loads(body)["requests"]
        assert (last["method"], last["path"], last["status"], last["client_id"]) == (
            "GET",
            "/v1/cefi/balances",
            401,
            None,
        )
        assert last["problem"]["detail"] == "missing header x-svc-auth-token"
        status, body = _get(url + "/_sim/requests")
        doc = json.loads(body)
        assert [r["status"] for r in doc["requests"]] == [401, 200] and doc["capacity"] == 1000
        assert doc["requests"][1]["client_id"] == "100" and "problem" not in doc["requests"][1]
        described = json.loads(_get(url + "/_sim/openapi.json")[1])  # what the control document promises
        jsonschema.validate(doc, {"$ref": "#/components/schemas/Requests", "components": described["components"]})
        assert _get(url + "/_sim/requests?limit=0")[0] == 400
        status, body = _get(url + "/_sim/ui/?instrument=1")
        assert status == 200 and b"<html" in body
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0
    assert f"on {url}" in out  # the real port, not 0
    # the live page, found from the startup lines: an address that serves it
    (page,) = [
        ln.rpartition(" ")[2] for ln in out.splitlines() if ln.startswith("Watch the book, trades and orders live: ")
    ]
    assert page == f"{url}/_sim/ui/?instrument=1"
    lines = [ln for ln in err.splitlines() if " /v1/cefi/balances " in ln]
    assert len(lines) == 2
    assert " GET /v1/cefi/balances 200 " in lines[0] and "ms client=100 request_id=r-1" in lines[0]
    assert " GET /v1/cefi/balances 401 " in lines[1] and "client=- request_id=req-" in lines[1]


def test_quiet_logs_nothing_and_json_is_one_object_a_line(tmp_path: Path) -> None:
    with serving(tmp_path, "--quiet") as (url, proc):
        _get(url + "/_sim/health")
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    assert "/_sim/health" not in err
    with serving(tmp_path, "--log-format", "json") as (url, proc):
        _get(url + "/_sim/health", {"X-Request-Id": "h-1"})
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    (line,) = [orjson.loads(ln) for ln in err.splitlines() if ln.startswith("{")]
    assert {k: line[k] for k in ("method", "path", "status", "client_id", "request_id")} == {
        "method": "GET",
        "path": "/_sim/health",
        "status": 200,
        "client_id": None,
        "request_id": "h-1",
    }
    assert isinstance(line["ms"], float) and line["time"].endswith("Z")


def test_python_dash_m_cefisim_is_the_command() -> None:
    done = subprocess.run([sys.executable, "-m", "cefisim", "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "serve" in done.stdout and "scenarios" in done.stdout


def test_what_serve_cannot_do_is_one_line_that_says_what_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """--speed runs a virtual clock by itself: on the wall clock it would be ignored, so it is refused
    (as the flag or CEFISIM_SPEED); a journal in a folder that does not exist names that folder."""
    assert main(["serve", "--port", "0", "--speed", "10"]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        (
            "cefisim serve: --speed (CEFISIM_SPEED) needs --clock virtual: on the wall clock engine time is real time;"
            " add --clock virtual, or leave --speed out"
        )
    ]
    monkeypatch.setenv("CEFISIM_SPEED", "5")
    assert main(["serve", "--port", "0"]) == 2
    assert "--speed (CEFISIM_SPEED) needs --clock virtual" in capsys.readouterr().err
    monkeypatch.delenv("CEFISIM_SPEED")
    missing = tmp_path / "no" / "such"
    assert main(["serve", "--port", "0", "--journal", str(missing / "j.jsonl")]) == 2
    assert capsys.readouterr().err.strip() == (
        f"cefisim serve: --journal {missing / 'j.jsonl'}: no folder {missing}: "
        "create it, or name a file in a folder that exists"
    )
    for flag, value, said in (
        ("--speed", "abc", "argument --speed: 'abc': expected times real time"),
        ("--speed", "nan", "argument --speed: 'nan': expected times real time"),
        ("--log-level", "loud", "argument --log-level: invalid choice: 'LOUD'"),
    ):
        with pytest.raises(SystemExit) as exit_:
            main(["serve", "--clock", "virtual", flag, value])
        assert exit_.value.code == 2 and said in capsys.readouterr().err


def test_the_banner_says_why_it_shows_no_plain_live_page_and_how_to_open_it(tmp_path: Path) -> None:
    with serving(tmp_path, "--control-token", "s3cret") as (url, proc):
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=30)
    assert "Watch the book" not in out and "s3cret" not in out
    assert "The live page needs the control token (--control-token); a browser passes it in the page's address:" in out
    assert f"  {url}/_sim/ui/?instrument=1#token=<your token>   ({url}/ lists the server's pages)" in out
    with serving(tmp_path, "--environment", "production") as (url, proc):
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=30)
    assert "No live page: --environment production serves no control plane (/_sim/)." in out


def test_the_event_loop_is_asyncio_uvloop_or_auto_and_uvloop_missing_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--loop auto`` takes uvloop when it is installed (the [test] extra installs it) and asyncio when
    not; ``--loop uvloop`` without it is one line naming the extra, exit 2, before anything is loaded."""
    assert loop_factory("asyncio") is asyncio.new_event_loop
    for choice, made in (("asyncio", "asyncio"), ("uvloop", "uvloop"), ("auto", "uvloop")):
        loop = loop_factory(choice)()
        try:
            assert loop_name(loop) == made
        finally:
            loop.close()
    assert _parse({}).loop == "auto" and _parse({"CEFISIM_LOOP": "asyncio"}).loop == "asyncio"
    monkeypatch.setitem(sys.modules, "uvloop", None)  # as if not installed: importing it raises
    assert loop_factory("auto") is asyncio.new_event_loop
    assert main(["serve", "--port", "0", "--loop", "uvloop", "--scenario", "no-such-file.json"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "cefisim serve: --loop uvloop needs uvloop: pip install 'cefisim[fast]'"
    ]


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_the_server_serves_signed_requests_on_each_event_loop(tmp_path: Path, loop: str) -> None:
    with serving(tmp_path, "--loop", loop) as (url, proc):
        path = "/v1/cefi/balances"
        assert _get(url + path, _signed(path))[0] == 200
        assert _get(url + "/_sim/health")[0] == 200
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0
    assert f"(virtual clock, {loop}) on {url}" in out
