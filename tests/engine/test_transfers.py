"""Transfers (DEPOSIT/WITHDRAW after a settlement delay) and paper funds; both move asset totals."""

from __future__ import annotations

from cefisim.engine.events import FundsEvent, TransferEvent
from cefisim.engine.rejects import Reject
from cefisim.engine.vocabulary import TransferStatus
from tests.engine.builders import ALICE, BTC, DAVE, SECOND, USD, Sim, fingerprint

T_COMPLETED = TransferStatus.COMPLETED
T_INITIALIZED = TransferStatus.INITIALIZED
T_REJECTED = TransferStatus.REJECTED


def test_deposit_settles_after_the_delay(sim: Sim) -> None:
    sim.settlement_delay(10 * SECOND)
    totals = sim.v.asset_totals()
    before = sim.bal(ALICE, USD).total
    r = sim.transfer(ALICE, USD, "12.34", "DEPOSIT")
    t = r.transfer
    assert r.ok and t.status == T_INITIALIZED and r.snapshot_status == T_INITIALIZED
    assert [e.status for e in r.events if isinstance(e, TransferEvent)] == [T_INITIALIZED]
    assert sim.bal(ALICE, USD).total == before
    sim.advance(10 * SECOND - 1)
    assert t.status == T_INITIALIZED
    r = sim.advance(1)
    assert t.status == T_COMPLETED
    assert [(e.transfer_id, e.status) for e in r.events if isinstance(e, TransferEvent)] == [(t.id, T_COMPLETED)]
    assert sim.bal(ALICE, USD).total == before + 1_234
    totals[USD] += 1_234
    assert sim.v.asset_totals() == totals
    sim.check()


def test_withdraw_holds_then_settles(sim: Sim) -> None:
    sim.settlement_delay(10 * SECOND)
    before = sim.bal(ALICE, BTC).total
    t = sim.transfer(ALICE, BTC, "1.5", "WITHDRAW", "CRYPTO").transfer
    assert t.status == T_INITIALIZED
    assert sim.bal(ALICE, BTC).hold == 150_000_000
    assert sim.bal(ALICE, BTC).total == before
    sim.check()
    sim.advance(10 * SECOND)
    assert t.status == T_COMPLETED
    assert sim.bal(ALICE, BTC).total == before - 150_000_000 and sim.bal(ALICE, BTC).hold == 0
    sim.check()


def test_withdraw_with_insufficient_funds_is_rejected() -> None:
    sim = Sim(balances={DAVE: {USD: 1_000}})
    sim.buy(DAVE, "0.09", "100.00")  # holds 9.00 + 0.018 -> 9.02
    r = sim.transfer(DAVE, USD, "0.99", "WITHDRAW")
    assert r.snapshot_status == T_INITIALIZED  # what the request is answered: decided at settlement
    assert [e.status for e in r.events if isinstance(e, TransferEvent)] == [T_INITIALIZED, T_REJECTED]
    assert r.transfer.status == T_REJECTED and r.transfer.reject_reason == "INSUFFICIENT_BALANCE"
    assert sim.bal(DAVE, USD).total == 1_000 and sim.bal(DAVE, USD).hold == 902
    r = sim.transfer(DAVE, USD, "0.98", "WITHDRAW")
    assert r.transfer.status == T_COMPLETED
    assert sim.bal(DAVE, USD).total == 902 and sim.bal(DAVE, USD).available == 0
    sim.check()


def test_withdraw_beyond_the_balance_is_initialized_and_rejected_after_the_delay() -> None:
    """Like any transfer: INITIALIZED until the settlement delay has passed, holding nothing meanwhile
    (the balance did not cover it), then decided against the available balance: REJECTED."""
    sim = Sim(balances={DAVE: {USD: 1_000}})
    sim.settlement_delay(5 * SECOND)
    r = sim.transfer(DAVE, USD, "10.01", "WITHDRAW")
    t = r.transfer
    assert r.ok and t.status == T_INITIALIZED and r.snapshot_status == T_INITIALIZED
    assert [e.status for e in r.events if isinstance(e, TransferEvent)] == [T_INITIALIZED]
    assert sim.bal(DAVE, USD).hold == 0 and sim.bal(DAVE, USD).available == 1_000
    sim.check()
    sim.advance(5 * SECOND - 1)
    assert t.status == T_INITIALIZED
    r = sim.advance(1)
    assert [(e.transfer_id, e.status) for e in r.events if isinstance(e, TransferEvent)] == [(t.id, T_REJECTED)]
    assert t.status == T_REJECTED and t.reject_reason == "INSUFFICIENT_BALANCE" and t.updated > t.created
    assert sim.bal(DAVE, USD).total == 1_000 and sim.bal(DAVE, USD).hold == 0
    sim.check()


def test_withdraw_beyond_the_balance_completes_if_the_balance_covers_it_at_settlement() -> None:
    sim = Sim(balances={DAVE: {USD: 1_000}})
    sim.settlement_delay(5 * SECOND)
    t = sim.transfer(DAVE, USD, "10.01", "WITHDRAW").transfer
    sim.funds(DAVE, USD, "0.01")
    sim.advance(5 * SECOND)
    assert t.status == T_COMPLETED and t.reject_reason is None
    assert sim.bal(DAVE, USD).total == 0 and sim.bal(DAVE, USD).hold == 0
    sim.check()


def test_withdraw_beyond_the_balance_is_rejected_at_once_under_the_rules_of_edition_1() -> None:
    """What ``cefisim-journal/1`` journals recorded: REJECTED at once, without an INITIALIZED event."""
    sim = Sim(balances={DAVE: {USD: 1_000}})
    sim.v.use_rules(1)
    sim.settlement_delay(5 * SECOND)
    r = sim.transfer(DAVE, USD, "10.01", "WITHDRAW")
    assert r.transfer.status == T_REJECTED and r.snapshot_status is None
    assert [e.status for e in r.events if isinstance(e, TransferEvent)] == [T_REJECTED]
    sim.check()


def test_withdrawn_funds_on_hold_cannot_back_an_order() -> None:
    sim = Sim(balances={DAVE: {USD: 10_020}})
    sim.settlement_delay(SECOND)
    sim.transfer(DAVE, USD, "0.01", "WITHDRAW")
    assert sim.buy(DAVE, "1", "100.00").reject == Reject.INSUFFICIENT_BALANCE


def test_transfer_without_delay_completes_at_once(sim: Sim) -> None:
    r = sim.transfer(ALICE, USD, "1", "DEPOSIT")
    assert r.transfer.status == T_COMPLETED
    assert [e.status for e in r.events if isinstance(e, TransferEvent)] == [T_INITIALIZED, T_COMPLETED]
    assert len(r.events) == 2


def test_transfer_refusals(sim: Sim) -> None:
    before = fingerprint(sim.v)
    assert sim.transfer(ALICE, USD, "0.001", "DEPOSIT").reject == Reject.QTY_OFF_GRID
    assert sim.transfer(ALICE, USD, "0", "DEPOSIT").reject == Reject.QTY_NOT_POSITIVE
    assert sim.transfer(ALICE, 99, "1", "DEPOSIT").reject == Reject.UNKNOWN_ASSET
    assert sim.transfer(999, USD, "1", "DEPOSIT").reject == Reject.UNKNOWN_CLIENT
    assert fingerprint(sim.v) == before


def test_paper_funds_add_and_remove() -> None:
    sim = Sim(balances={})
    totals = sim.v.asset_totals()
    r = sim.funds(DAVE, USD, "100")
    assert r.ok and sim.bal(DAVE, USD).total == 10_000
    assert next(e for e in r.events if isinstance(e, FundsEvent))[1:] == (DAVE, USD, 10_000)
    sim.buy(DAVE, "0.5", "100.00")  # holds 50.10
    assert sim.funds(DAVE, USD, "49.91", remove=True).reject == Reject.INSUFFICIENT_BALANCE
    assert sim.funds(DAVE, USD, "49.90", remove=True).ok
    assert sim.bal(DAVE, USD).available == 0 and sim.bal(DAVE, USD).total == 5_010
    assert sim.funds(DAVE, USD, "0.01", remove=True).reject == Reject.INSUFFICIENT_BALANCE
    assert sim.funds(DAVE, USD, "0.001").reject == Reject.QTY_OFF_GRID
    assert sim.funds(DAVE, USD, "0").reject == Reject.QTY_NOT_POSITIVE
    assert sim.funds(DAVE, 99, "1").reject == Reject.UNKNOWN_ASSET
    assert sim.funds(999, USD, "1").reject == Reject.UNKNOWN_CLIENT
    totals[USD] = totals.get(USD, 0) + 5_010
    assert sim.v.asset_totals() == totals
    sim.check()
