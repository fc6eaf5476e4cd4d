"""The cefisim command: clear errors and exit code 2 instead of tracebacks; the example request."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from api.cli import example_request, main
from api.scenario import parse_scenario
from api.sim import Simulation
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
    doc = scenario_doc(api_keys=[{"key_id": "k", "kind": "user", "user_id": "u", "client_id": "100",
                                  "public_key": "-----BEGIN PUBLIC KEY-----\n...\n-----END PUBLIC KEY-----\n"}])
    assert main(["serve", "--scenario", _write(tmp_path, doc), "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert "api_keys[0].public_key" in err and "Traceback" not in err


def test_missing_scenario_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--scenario", str(tmp_path / "nope.json")]) == 2
    assert "nope.json" in capsys.readouterr().err


def test_example_request_signs_with_the_first_key() -> None:
    sim = Simulation(parse_scenario(scenario_doc(), "s.json"))
    text = example_request(sim, "127.0.0.1", 8080, "concat")
    assert "openssl dgst -sha256 -hmac alice-secret" in text
    assert "x-svc-auth-userid: 100" in text and "/v1/cefi/balances" in text
