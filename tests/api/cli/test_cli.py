"""The cefisim command: clear errors and exit code 2 instead of tracebacks; the example request."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from cefisim.api.cli.main import example_request, main
from cefisim.api.formats.scenario import parse_scenario
from cefisim.api.runtime.simulation import Simulation
from tests.api.conftest import scenario_doc


def _write(tmp_path: Path, doc: object) -> str:
    path = tmp_path / "s.json"
    path.write_bytes(orjson.dumps(doc))
    return str(path)


def test_bad_scenario_is_exit_2_with_path_and_reason(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = scenario_doc()
    doc["instruments"][0]["price_increment"] = "zero"
    assert main(["serve", "--scenario", _write(tmp_path, doc), "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert "instruments[0].price_increment" in err and "Traceback" not in err


def test_bad_public_key_is_exit_2_naming_the_entry(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = scenario_doc(
        api_keys=[
            {
                "key_id": "k",
                "kind": "user",
                "user_id": "u",
                "client_id": "100",
                "public_key": "-----BEGIN PUBLIC KEY-----\n...\n-----END PUBLIC KEY-----\n",
            }
        ]
    )
    assert main(["serve", "--scenario", _write(tmp_path, doc), "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert "api_keys[0].public_key" in err and "Traceback" not in err


@pytest.mark.parametrize("command", [["replay"], ["replay", "--quiet"], ["data", "record", "--out", "x.jsonl"]])
def test_every_command_refuses_the_bad_public_key_serve_refuses(
    command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    doc = scenario_doc(
        api_keys=[
            {
                "key_id": "k",
                "kind": "user",
                "user_id": "u",
                "client_id": "100",
                "public_key": "-----BEGIN PUBLIC KEY-----\n...\n-----END PUBLIC KEY-----\n",
            }
        ]
    )
    assert main([*command, _write(tmp_path, doc)]) == 2
    err = capsys.readouterr().err
    assert "api_keys[0].public_key: not a PEM public key" in err and "Traceback" not in err


def test_missing_scenario_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--scenario", str(tmp_path / "nope.json")]) == 2
    assert "nope.json" in capsys.readouterr().err


def test_example_request_signs_with_the_first_key() -> None:
    sim = Simulation(parse_scenario(scenario_doc(), "s.json"))
    text = example_request(sim, "http://127.0.0.1:8080", "concat")
    assert "openssl dgst -sha256 -hmac alice-secret" in text
    assert "x-svc-auth-userid: 100" in text and "/v1/cefi/balances" in text


def _serve_args(*argv: str):
    import argparse

    from cefisim.api.cli.main import _serve_parser

    parser = argparse.ArgumentParser()
    _serve_parser(parser.add_subparsers(dest="command"))
    return parser.parse_args(["serve", *argv])


def test_signing_settings_come_from_the_scenario_unless_a_flag_says_otherwise() -> None:
    from cefisim.api.cli.main import server_options

    scenario = parse_scenario(
        scenario_doc(settings={"signature_layout": "newline", "sign_reference_data": True}), "s.json"
    )
    options = server_options(_serve_args(), scenario)
    assert options.signature_layout == "newline" and options.sign_reference_data is True
    options = server_options(_serve_args("--signature-layout", "either"), scenario)
    assert options.signature_layout == "either"
    plain = server_options(_serve_args(), parse_scenario(scenario_doc(), "s.json"))
    assert plain.signature_layout == "concat" and plain.sign_reference_data is False


def test_speed_applies_to_the_virtual_clock_only() -> None:
    from cefisim.api.cli.main import server_options

    scenario = parse_scenario(scenario_doc(), "s.json")
    assert server_options(_serve_args("--clock", "virtual", "--speed", "60"), scenario).speed == 60.0
    assert server_options(_serve_args("--speed", "60"), scenario).speed is None
