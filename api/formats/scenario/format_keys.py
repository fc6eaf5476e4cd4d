"""The scenario format's keys and enums: the one table the parser and ``schema.json`` share.

Contract: each ``*_KEYS`` is ``(required, optional)`` for one kind of object (``EVENT_KEYS`` and
``AGENT_KEYS`` per ``type``, on top of ``EVENT_COMMON`` / ``AGENT_COMMON``); the tuples below them
are the allowed values of enum fields. ``schema.json`` must say the same, and
``tests/api/formats/scenario/test_scenario_schema.py`` holds the two together (through ``loader``, which
re-exports this table). Data only, no logic.
"""

from __future__ import annotations

from cefisim.engine.vocabulary import ExecInst, OrderFlag, OrderType, Platform, Side, TimeInForce, TransferType

ALO = ExecInst.ALO
AON = ExecInst.AON
BUY = Side.BUY
GTC = TimeInForce.GTC
IOC = TimeInForce.IOC
LIMIT = OrderType.LIMIT
MARKET = OrderType.MARKET
SELL = Side.SELL
USE_AGGRESSIVE_PRICING = OrderFlag.USE_AGGRESSIVE_PRICING
CRYPTO = Platform.CRYPTO
DEPOSIT = TransferType.DEPOSIT
FIAT = Platform.FIAT
WITHDRAW = TransferType.WITHDRAW


# --- the format's keys: (required, optional) per object; schema.json must say the same -----------

TOP_KEYS = (
    ("seed", "start", "assets", "instruments", "clients"),
    ("$schema", "description", "end", "settings", "api_keys", "oauth_clients", "events", "agents", "recorded"),
)
ASSET_KEYS = (("id", "name", "decimals"), ())
INSTRUMENT_KEYS = (
    ("id", "symbol", "base", "quote", "price_increment", "qty_increment"),
    ("min_qty", "price_band", "maker_fee", "taker_fee", "status"),
)
CLIENT_KEYS = (("id", "mnemonic"), ("key", "secret", "balances", "self_trade_prevention", "fees"))
FEE_KEYS = (("maker", "taker"), ())
SETTINGS_KEYS = (
    (),
    (
        "latency",
        "settlement_delay_ms",
        "signature_layout",
        "sign_reference_data",
        "max_open_orders",
        "status_retention",
    ),
)
LATENCY_KEYS = ((), ("entry_ms", "modify_ms", "cancel_ms"))
RECORDED_KEYS = (
    ("instrument", "file"),
    ("format", "offset", "speed", "queue_model", "power_n", "impact", "feed_latency_ms", "order_latency_ms", "note"),
)
API_KEY_KEYS = (
    ("key_id", "kind", "public_key"),
    ("user_id", "client_id", "users", "name", "revoked", "expires_at"),
)
API_KEY_USER_KEYS = (("user_id", "client_id"), ())
OAUTH_CLIENT_KEYS = (("client_id", "redirect_uris", "scopes"), ("name", "disabled"))
EVENT_COMMON = (("at", "type"), ("note",))
EVENT_KEYS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "order": (
        ("client", "instrument", "side", "order_type", "qty"),
        ("price", "tif", "flags", "exec_inst", "stp", "hold_fee_rate", "external_id", "msg_id", "parent_id"),
    ),
    "modify": (
        ("client", "new_qty"),
        ("order_id", "external_id", "new_price", "new_type", "msg_id", "parent_id", "prev_modify"),
    ),
    "cancel": (("client", "ref"), ()),
    "transfer": (("client", "asset", "amount", "transfer_type", "platform"), ("instructions",)),
    "instrument_status": (("instrument", "status"), ()),
    "latency": ((), ("entry_ms", "modify_ms", "cancel_ms")),
    "settlement_delay": (("delay_ms",), ()),
    "clock": ((), ()),
    "paper_funds": (("client", "asset", "amount"), ("remove",)),
    "client_info": (("client", "self_trade_prevention"), ()),
    "venue_cancel": (("reason",), ("client", "instrument")),
    "venue_faults": ((), ("read_lag_ms", "fill_delay_ms", "clock_skew_s")),
}
AGENT_COMMON = (("type", "instrument"), ("name", "note", "start", "end"))
POPULATION_COMMON = ("count", "latency_ms")  # optional keys of every population kind (clients is required)
AGENT_KEYS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "market_maker": (
        ("client", "interval", "levels", "spread", "spacing", "qty"),
        ("qty_step", "post_only", "random_walk", "prices", "prices_file", "every"),
    ),
    "noise_taker": (
        ("client", "mean_interval", "qty_min", "qty_max"),
        ("market_fraction", "buy_fraction", "through"),
    ),
    "value_trader": (
        ("clients", "mean_interval", "qty_min", "qty_max", "fundamental"),
        (*POPULATION_COMMON, "noise", "noise_vol", "smoothing", "margin"),
    ),
    "momentum_trader": (
        ("clients", "mean_interval", "qty_min", "qty_max", "short", "long"),
        (*POPULATION_COMMON, "threshold", "market_fraction", "through"),
    ),
    "noise_trader": (
        ("clients", "mean_interval", "qty_min", "qty_max"),
        (
            *POPULATION_COMMON,
            "activity",
            "calm_fraction",
            "passive_fraction",
            "depth",
            "market_fraction",
            "through",
            "buy_fraction",
        ),
    ),
    "inventory_maker": (
        ("clients", "interval", "levels", "spread", "spacing", "qty", "max_inventory", "reference"),
        (*POPULATION_COMMON, "qty_step", "skew", "post_only"),
    ),
}
POPULATION_KINDS = ("value_trader", "momentum_trader", "noise_trader", "inventory_maker")
CLIENT_TEMPLATE_KEYS = (("first_id", "mnemonic"), ("balances", "self_trade_prevention", "fees"))
FUNDAMENTAL_KEYS = (("start", "step"), ("mean", "reversion", "vol", "every"))
ACTIVITY_KEYS = (("busy", "calm"), ())
RANDOM_WALK_KEYS = (("start", "step"), ("vol", "floor"))

SIDES = (BUY, SELL)
ORDER_TYPES = (LIMIT, MARKET)
TIFS = (GTC, IOC)
FLAGS = (USE_AGGRESSIVE_PRICING,)
EXEC_INST = (ALO, AON)
TRANSFER_TYPES = (DEPOSIT, WITHDRAW)
PLATFORMS = (FIAT, CRYPTO)
FIAT_INSTRUCTIONS = {"fiat_account_id": "uuid", "identity_id": "uuid", "account_id": "uuid", "includes_fee": "bool"}
API_KEY_KINDS = ("user", "organization")
