"""Transfers and paper funds: the commands that move an asset in or out of a client's balance.

Contract:
- The amount is a decimal string on the asset's grid (its ``decimals``); off the grid or not positive
  is a typed rejection, as is an unknown client or asset, and changes nothing.
- A transfer is recorded INITIALIZED at once and is decided after the venue's settlement delay
  (engine time; at once when it is 0): COMPLETED or REJECTED. A DEPOSIT credits on settlement. A
  WITHDRAW the available balance covers when it is requested holds its amount until it settles
  COMPLETED; one it does not cover holds nothing (its ``reject_reason`` says so meanwhile) and is
  decided against the available balance at settlement: COMPLETED if it covers the amount then, else
  REJECTED (INSUFFICIENT_BALANCE).
- Under the rules of ``cefisim-journal/1`` (``VenueCore.rules`` 1) a WITHDRAW the available balance
  does not cover is REJECTED at once, as those journals recorded it.
- Paper funds change ``total`` at once; removing more than is available is refused.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cefisim.engine.commands import PaperFunds, RequestTransfer
from cefisim.engine.events import FundsEvent, TransferEvent
from cefisim.engine.ledger import balance
from cefisim.engine.records import Account, Transfer
from cefisim.engine.reference import Asset
from cefisim.engine.rejects import Reject
from cefisim.engine.vocabulary import TransferStatus, TransferType

DEPOSIT = TransferType.DEPOSIT.value
T_COMPLETED = TransferStatus.COMPLETED.value
T_INITIALIZED = TransferStatus.INITIALIZED.value
T_REJECTED = TransferStatus.REJECTED.value
INSUFFICIENT_BALANCE = Reject.INSUFFICIENT_BALANCE.value

if TYPE_CHECKING:
    from cefisim.engine.core import Result, VenueCore
    from cefisim.engine.events import Event


def _funds_target(v: VenueCore, client_id: int, asset_id: int, amount: str) -> tuple[Account, Asset, int] | Reject:
    """The account, asset and positive amount in units that a transfer or paper funds move."""
    account = v.accounts.get(client_id)
    if account is None:
        return Reject.UNKNOWN_CLIENT
    asset = v.assets.get(asset_id)
    if asset is None:
        return Reject.UNKNOWN_ASSET
    units = asset.grid.to_units(amount)
    if units is None:
        return Reject.QTY_OFF_GRID
    if units <= 0:
        return Reject.QTY_NOT_POSITIVE
    return account, asset, units


def request_transfer(v: VenueCore, cmd: RequestTransfer, result: Result) -> Result:
    """A DEPOSIT or WITHDRAW: INITIALIZED now (a WITHDRAW the available balance covers holds its
    amount), decided after the settlement delay (at once without one)."""
    target = _funds_target(v, cmd.client_id, cmd.asset_id, cmd.amount)
    if isinstance(target, Reject):
        result.reject = target
        return result
    account, asset, units = target
    tid = v.next_transfer_id
    v.next_transfer_id = tid + 1
    transfer = Transfer(
        tid,
        account,
        asset,
        units,
        cmd.type,
        cmd.platform,
        cmd.instructions,
        v.clock.stamp(),
        cmd.amount,
    )
    account.transfers[tid] = transfer
    result.transfer = transfer
    bal = balance(account, asset.id)
    if cmd.type != DEPOSIT:
        if bal.total - bal.hold >= units:
            bal.change_hold(units, 0)
        elif v.rules >= 2:
            transfer.reject_reason = INSUFFICIENT_BALANCE  # holds nothing: the settlement decides
        else:
            transfer.status = T_REJECTED
            transfer.reject_reason = INSUFFICIENT_BALANCE
            result.events.append(TransferEvent(transfer.created, tid, account.id, T_REJECTED))
            return result
    result.events.append(TransferEvent(transfer.created, tid, account.id, T_INITIALIZED))
    result.snapshot_status = T_INITIALIZED
    if v.settlement_delay_ns:
        v.schedule(v.clock.now + v.settlement_delay_ns, "settle_transfer", transfer)
    else:
        settle_transfer(v, transfer, result.events)
    return result


def settle_transfer(v: VenueCore, transfer: Transfer, events: list[Event]) -> None:
    """The settlement delay has passed: COMPLETED, or REJECTED for a WITHDRAW that held nothing and
    that the available balance still does not cover."""
    bal = balance(transfer.account, transfer.asset.id)
    amount = transfer.amount
    status = T_COMPLETED
    if transfer.type == DEPOSIT:
        bal.total += amount
    elif transfer.reject_reason is None:  # held since it was requested
        bal.change_hold(-amount, 0)
        bal.total -= amount
    elif bal.total - bal.hold >= amount:
        transfer.reject_reason = None
        bal.total -= amount
    else:
        status = T_REJECTED
    transfer.status = status
    transfer.updated = v.clock.stamp()
    events.append(TransferEvent(transfer.updated, transfer.id, transfer.account.id, status))


def paper_funds(v: VenueCore, cmd: PaperFunds, result: Result) -> Result:
    """Add paper funds to a client's balance, or remove what its available balance covers."""
    target = _funds_target(v, cmd.client_id, cmd.asset_id, cmd.amount)
    if isinstance(target, Reject):
        result.reject = target
        return result
    account, asset, units = target
    bal = balance(account, asset.id)
    if cmd.remove:
        if bal.total - bal.hold < units:
            result.reject = Reject.INSUFFICIENT_BALANCE
            return result
        units = -units
    bal.total += units
    ts = v.clock.stamp()
    account.funds_log.append((ts, asset.id, units))
    result.events.append(FundsEvent(ts, account.id, asset.id, units))
    return result
