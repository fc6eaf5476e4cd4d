// Every operation of the venue's document but OAuth's (a browser's flow) through openapi-fetch, typed by
// openapi-typescript's types of the served document (cefi.d.ts): the CeFi ones signed by docs/client.md's
// middleware (signing.ts), the ES256 key exchange and a refresh, then paper trading with the bearer token.
// tests/clients/test_typescript_client.py writes both files beside this one, type-checks the folder with
// `tsc --noEmit --strict` and runs this with Node against a live `cefisim serve`:
// `node cefi_run.js URL PRIVATE_KEY_PEM_FILE`. Each operation prints one JSON line {"operation", "status"};
// a refusal throws, so Node exits non-zero.
import { readFileSync } from "node:fs";
import { sign } from "node:crypto";
import createClient from "openapi-fetch";
import type { paths } from "./cefi";
import { signing } from "./signing.js";

const [url, keyFile] = process.argv.slice(2);
if (!url || !keyFile) throw new Error("usage: node cefi_run.js URL PRIVATE_KEY_PEM_FILE");
const clientId = "100";
const uuid = "3f2b1c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d";
const newest = "9999999999999999999"; // GET /orders and GET /transfers need a cursor: start from the newest

const cefi = createClient<paths>({ baseUrl: url });
cefi.use(signing("2f1d7c9e-8a3b-4c5d-9e6f-0a1b2c3d4e5f", "alice-secret", clientId));

/** The answer's data, after printing the operation; a problem answer throws. */
function ok<T>(operation: string, answer: { data?: T; error?: unknown; response: Response }): T {
  console.log(JSON.stringify({ operation, status: answer.response.status }));
  if (answer.data === undefined) throw new Error(`${operation}: ${answer.response.status} ${JSON.stringify(answer.error)}`);
  return answer.data;
}

function check(condition: boolean, what: string): void {
  if (!condition) throw new Error(what);
}

const settle = await fetch(`${url}/_sim/settlement-delay`, { method: "POST", body: JSON.stringify({ ms: 60000 }) });
check(settle.ok, "transfers must stay active: POST /_sim/settlement-delay");

check(ok("health", await cefi.GET("/v1/cefi/health")).status === "ok", "health");
ok("versions", await cefi.GET("/v1/cefi/versions"));
const assets = ok("assets", await cefi.GET("/v1/cefi/assets"));
check(assets.data.map((a) => a.fields.name).join() === "BTC,USD,ETH", "assets");
ok("instruments", await cefi.GET("/v1/cefi/instruments", { params: { query: { symbol: "BTC" } } }));
ok("market_quote", await cefi.GET("/v1/cefi/market/quote", { params: { query: { instrument_id: "1" } } }));
ok("quote_vwap", await cefi.POST("/v1/cefi/market/quote", { body: { qty: "1000", instrument_id: "1" } }));
ok(
  "markets_quote",
  await cefi.POST("/v1/cefi/markets/quote", { body: { qty: "0.1", instrument_id: "1", side: "SELL", qty_unit: "BASE" } }),
);
check(ok("clients", await cefi.GET("/v1/cefi/clients")).data[0]?.info.mnemonic === "alice", "clients");
const patched = ok(
  "set_self_trade_prevention",
  await cefi.PATCH("/v1/cefi/clients", { body: { id: clientId, info: { self_trade_prevention: "CANCEL_BOTH" } } }),
);
check(patched.data[0]?.info.self_trade_prevention === "CANCEL_BOTH", "PATCH /clients");
ok("balances", await cefi.GET("/v1/cefi/balances", { params: { query: { asset_name: "USD" } } }));

const placed = ok(
  "place_order",
  await cefi.POST("/v1/cefi/orders", {
    body: {
      external_id: "ts-run-1",
      info: { client_id: clientId, instrument_id: "1", side: "BUY", type: "LIMIT", qty: "0.01", price: "29500.00", tif: "GTC" },
    },
  }),
);
check(placed.status === "ACTIVE", `placed: ${placed.status}`);
const status = ok("order_status", await cefi.GET("/v1/cefi/orders/status/{ref_id}", { params: { path: { ref_id: placed.id } } }));
check(status.external_id === "ts-run-1", "status");
check(ok("orders_active", await cefi.GET("/v1/cefi/orders/active")).data.length === 1, "active");
const byId = ok(
  "modify_order",
  await cefi.PATCH("/v1/cefi/orders", {
    body: { id: placed.id, info: { client_id: clientId, new_qty: "0.02", new_price: "29500.00" } },
  }),
);
check(byId.leaves_qty === "0.0200", `modified by id: ${byId.leaves_qty}`);
const byExternalId = ok(
  "modify_order",
  await cefi.PATCH("/v1/cefi/orders", {
    body: { external_id: "ts-run-1", info: { client_id: clientId, new_qty: "0.01", new_price: "29400.00" } },
  }),
);
check(byExternalId.modify_info?.new_price === "29400.00", "modified by external id");
ok("cancel_order", await cefi.DELETE("/v1/cefi/orders/{ref_id}", { params: { path: { ref_id: "ts-run-1" } } }));
const taken = ok(
  "place_order",
  await cefi.POST("/v1/cefi/orders", {
    body: { info: { client_id: clientId, instrument_id: "1", side: "BUY", type: "MARKET", qty: "0.01" } },
  }),
);
check(taken.status === "FILLED", `market order: ${taken.status}`);
check(ok("orders_all", await cefi.GET("/v1/cefi/orders/all", { params: { query: { size: 5 } } })).data.length === 2, "all");
check(ok("orders_trade", await cefi.GET("/v1/cefi/orders/trade")).data.length >= 1, "trade");
ok("orders_activity", await cefi.GET("/v1/cefi/orders/activity"));
check(ok("trades", await cefi.GET("/v1/cefi/orders", { params: { query: { timestamp: newest } } })).data.length >= 1, "trades");
ok("balances_activity", await cefi.GET("/v1/cefi/balances/activity"));

const fiat = { fiat_account_id: uuid, identity_id: uuid, account_id: uuid, includes_fee: false };
const deposit = ok(
  "create_transfer",
  await cefi.POST("/v1/cefi/transfers", {
    body: { request: { amount: "100", asset_id: "2", client_id: clientId, type: "DEPOSIT", platform: "FIAT", instructions: fiat } },
  }),
);
check(deposit.status === "INITIALIZED", `deposit: ${deposit.status}`);
const crypto = { address: "bc1qexample", network: "bitcoin", memo: "m-1" };
ok(
  "create_transfer",
  await cefi.POST("/v1/cefi/transfers", {
    body: { request: { amount: "0.5", asset_id: "1", client_id: clientId, type: "WITHDRAW", platform: "CRYPTO", instructions: crypto } },
  }),
);
check(ok("transfers", await cefi.GET("/v1/cefi/transfers", { params: { query: { timestamp: newest } } })).data.length === 2, "transfers");
check(ok("transfers_active", await cefi.GET("/v1/cefi/transfers/active")).data.length === 2, "active transfers");

// Auth: an ES256 proof of the key (base64url of r||s over "{key_id}.{timestamp}"), then a refresh
const timestamp = Math.floor(Date.now() / 1000);
const proof = sign("sha256", Buffer.from(`k-alice.${timestamp}`), { key: readFileSync(keyFile), dsaEncoding: "ieee-p1363" });
const tokens = ok(
  "api_key_token",
  await cefi.POST("/v1/auth/api-key/token", { body: { key_id: "k-alice", timestamp, signature: proof.toString("base64url") } }),
);
check(tokens.refresh_token !== undefined, "a user key's tokens hold a refresh token");
const refreshed = ok(
  "token_refresh",
  await cefi.POST("/v1/auth/token/refresh", { body: { refresh_token: tokens.refresh_token ?? "" } }),
);

// paper trading with the bearer token
const paper = createClient<paths>({ baseUrl: url, headers: { Authorization: `Bearer ${refreshed.access_token}` } });
const added = ok("paper_add_funds", await paper.POST("/v1/paper-trading/funds", { body: { asset: "BTC", amount: "1.5" } }));
const removed = ok(
  "paper_remove_funds",
  await paper.POST("/v1/paper-trading/funds/remove", { body: { asset: "1", amount: "0.5" } }),
);
check(added.balances[0]?.amount !== removed.balances[0]?.amount, "paper funds move the balance");
