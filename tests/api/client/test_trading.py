"""The calls the HTTP client and the backtest strategy's context share (``api/client/trading.py``): the
same names with the same parameters, name for name and default for default (mypy, in ``make lint``,
checks their types against the Protocol; it lets a parameter's name differ, this does not). The
client's are coroutines and the context's are not, as the Protocol's docstring says."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from cefisim.api.cli.backtest.context import Context
from cefisim.api.client import CefiClient, ProblemError, Trading
from cefisim.api.formats.scenario import parse_scenario
from cefisim.api.runtime.simulation import Simulation
from cefisim.engine.simulation.backtest import Harness
from tests.api.conftest import scenario_doc

CALLS = [name for name, member in vars(Trading).items() if inspect.isfunction(member) and not name.startswith("_")]


def _parameters(fn: Any) -> list[tuple[str, Any, Any]]:
    return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]


def test_the_protocol_holds_the_order_operations_and_the_reads_a_strategy_uses() -> None:
    assert CALLS == ["place_order", "modify_order", "cancel_order", "order_status", "balances", "instruments"]


@pytest.mark.parametrize("name", CALLS)
@pytest.mark.parametrize("implementation", [CefiClient, Context], ids=["client", "context"])
def test_each_shared_call_has_the_protocols_parameters(implementation: type, name: str) -> None:
    assert Trading in implementation.__mro__  # declared, so mypy checks it against the Protocol
    own = implementation.__dict__.get(name)
    assert own is not None, f"{implementation.__name__}.{name} is the Protocol's placeholder, not its own"
    assert _parameters(own) == _parameters(getattr(Trading, name))
    assert inspect.iscoroutinefunction(own) == (implementation is CefiClient)


def _context() -> Context:
    sim = Simulation(parse_scenario(scenario_doc(), "ctx.json"), clock="virtual", start=False)
    # no runner: these calls never advance the scenario
    return Context(Harness(sim.venue, None, 100, submit=sim.apply), sim.scenario)  # type: ignore[arg-type]


def test_the_contexts_reads_take_the_clients_filters() -> None:
    ctx = _context()
    assert [b["id"] for b in ctx.balances()] == ["1", "2", "3"]
    assert [b["id"] for b in ctx.balances(asset_name="USD")] == ["2"]
    assert [b["id"] for b in ctx.balances(asset_id=3)] == ["3"]
    assert ctx.balances(asset_id="9") == []
    assert [i["id"] for i in ctx.instruments(symbol="ETH-USD")] == ["2"]
    assert [i["id"] for i in ctx.instruments(id="1")] == ["1"]
    assert len(ctx.instruments()) == 2


@pytest.mark.parametrize("ref", ["12\n", "not valid!", "1" * 20])
def test_the_context_refuses_an_order_reference_as_the_server_does(ref: str) -> None:
    """A malformed reference is a 400 naming ``ref_id`` for a status read, as for a cancel."""
    ctx = _context()
    for call in (ctx.order_status, ctx.cancel_order):
        with pytest.raises(ProblemError) as refused:
            call(ref)
        assert refused.value.status == 400 and refused.value.detail.startswith("ref_id: "), refused.value
