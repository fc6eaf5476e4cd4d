// cefisim live page: one EventSource on /_sim/stream, state updated per event, drawn once per animation
// frame (requestAnimationFrame) for whatever changed since the last frame. No framework, no build step.
"use strict";

const MAX_TRADES = 60;        // rows in the trades table
const MAX_PRICES = 600;       // points of the last-price chart
const MAX_ACTIVITY = 80;      // lines of the activity list
const OPEN = new Set(["NEW_PENDING", "ACTIVE", "MODIFY_PENDING", "CANCEL_PENDING"]);

const $ = (id) => document.getElementById(id);

const state = {
  venue: "default", instrument: "", client: "",
  token: "",                   // #token=T (--control-token): sent as a header, and in the stream's query
  depth: null,                 // the latest depth document (a replacement, never a delta)
  trades: [],                  // newest last, at most MAX_TRADES
  seenTrades: new Set(),       // match ids already shown (history and stream may overlap)
  prices: [],                  // [engine ns as Number, price as Number], newest last
  orders: new Map(),           // open orders of the chosen client: id -> order record
  activity: [],                // newest first
  dirty: new Set(),            // panels to redraw at the next frame
  source: null,
  once: false,                 // ?once=1: draw the state at load and keep no stream open (screenshots)
  decimals: null,              // decimals of the instrument's prices (its price grid), from the first price seen
  ticks: [],                   // the price axis's labels as last drawn
};

// Counters for the status line and for tests (window.cefisimLive): events handled, frames drawn,
// the longest gap between two frames over the last second, the time spent drawing.
const stats = {
  events: 0, frames: 0, renders: 0, renderMs: 0, maxRenderMs: 0, lastEventId: "", connected: false,
  snapshots: 0, frameGapMs: 0, maxFrameGapMs: 0, eventsPerSecond: 0, framesPerSecond: 0,
};
window.cefisimLive = { state, stats, niceTicks };

function mark(...panels) { for (const p of panels) state.dirty.add(p); }

function fmtTime(ns) {
  const ms = Number(String(ns).slice(0, 13));
  return new Date(ms).toISOString().slice(11, 23);
}

function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = text;
  if (cls) e.className = cls;
  return e;
}

function row(cells) {
  const tr = document.createElement("tr");
  for (const [text, cls] of cells) tr.appendChild(el("td", text, cls));
  return tr;
}

// --- events -----------------------------------------------------------------------------------------

// the decimals a price string shows: the instrument's price grid formats every price with as many
function noteDecimals(price) {
  if (state.decimals !== null || price === null || price === undefined) return;
  const dot = String(price).indexOf(".");
  state.decimals = dot < 0 ? 0 : String(price).length - dot - 1;
}

function noteDepthDecimals(d) {
  for (const l of d.bids.concat(d.asks)) noteDecimals(l.price);
  noteDecimals(d.last_price);
}

function onSnapshot(doc) {
  stats.snapshots++;
  state.depth = doc.depth;
  noteDepthDecimals(doc.depth);
  if (doc.orders) {
    state.orders = new Map(doc.orders.map((o) => [o.id, o]));
    if (doc.reason === "reset") state.activity.unshift({ text: "state reset: snapshot", cls: "" });
  }
  noteLast(doc.depth.last_price, doc.depth.timestamp);
  mark("book", "orders", "activity", "chart");
}

function onDepth(doc) {
  state.depth = doc;
  noteDepthDecimals(doc);
  mark("book");
}

function addTrade(t) {
  if (state.seenTrades.has(t.match_id)) return;
  state.seenTrades.add(t.match_id);
  state.trades.push(t);
  if (state.trades.length > MAX_TRADES) {
    const gone = state.trades.splice(0, state.trades.length - MAX_TRADES);
    for (const g of gone) state.seenTrades.delete(g.match_id);
  }
  noteDecimals(t.price);
  state.prices.push([Number(t.timestamp), Number(t.price)]);
  if (state.prices.length > MAX_PRICES) state.prices.splice(0, state.prices.length - MAX_PRICES);
  mark("trades", "chart");
}

function noteLast(price, ts) {
  if (price !== null && price !== undefined && state.prices.length === 0) {
    state.prices.push([Number(ts), Number(price)]);
  }
}

function onOrder(doc) {
  const o = doc.order;
  if (OPEN.has(o.status)) state.orders.set(o.id, o); else state.orders.delete(o.id);
  for (const c of doc.changes) {
    const info = o.order_info;
    let text;
    if (c.trade) {
      text = `${fmtTime(c.timestamp)}  #${o.id} ${info.side} fill ${c.trade.qty} @ ${c.trade.price} (${c.trade.liq_flag})`;
    } else {
      text = `${fmtTime(c.timestamp)}  #${o.id} ${info.side} ${info.qty}${info.price ? " @ " + info.price : ""} ${c.status}` +
        (c.detail ? ` (${c.detail})` : "");
    }
    state.activity.unshift({ text, cls: info.side === "BUY" ? "buy" : "sell" });
  }
  if (state.activity.length > MAX_ACTIVITY) state.activity.length = MAX_ACTIVITY;
  mark("orders", "activity");
}

function handler(fn) {
  return (ev) => {
    stats.events++;
    if (ev.lastEventId) stats.lastEventId = ev.lastEventId;
    fn(JSON.parse(ev.data));
  };
}

// --- connection -------------------------------------------------------------------------------------

function query(extra) {
  const q = new URLSearchParams();
  if (state.venue) q.set("venue", state.venue);
  for (const [k, v] of Object.entries(extra || {})) if (v) q.set(k, v);
  return q.toString();
}

// the control routes of the venue the page is opened for: a created venue's under /_sim/venues/{id}
function controlBase() {
  return state.venue && state.venue !== "default" ? `/_sim/venues/${encodeURIComponent(state.venue)}` : "/_sim";
}

// a request to the control plane, with the control token when the page was given one
function control(path) {
  return fetch(`${controlBase()}${path}`, state.token ? { headers: { Authorization: `Bearer ${state.token}` } } : {});
}

async function loadHistory(instrument) {
  try {
    const resp = await control(`/trades/${encodeURIComponent(instrument)}?limit=${MAX_TRADES}`);
    if (!resp.ok || instrument !== state.instrument) return;
    const newestFirst = await resp.json();
    const live = state.trades;
    state.trades = []; state.seenTrades = new Set(); state.prices = [];
    for (const t of newestFirst.reverse()) addTrade(t);
    for (const t of live) addTrade(t);
  } catch (e) { /* history is a nicety: the stream still runs */ }
}

function connect() {
  if (state.source) state.source.close();
  state.depth = null; state.trades = []; state.seenTrades = new Set(); state.prices = [];
  state.orders = new Map(); state.activity = []; state.decimals = null;
  mark("book", "trades", "chart", "orders", "activity");
  if (!state.instrument) return;
  const once = state.once ? "1" : "";
  const url = `/_sim/stream?${query({ instrument: state.instrument, client: state.client, once, token: state.token })}`;
  const source = new EventSource(url);
  state.source = source;
  source.addEventListener("snapshot", handler((doc) => {
    onSnapshot(doc);
    // once: the server ends the stream after the snapshot; closing it here stops EventSource's reconnect
    if (state.once) { source.close(); stats.connected = false; setStatus("snapshot (once=1: not live)", ""); }
  }));
  source.addEventListener("depth", handler(onDepth));
  source.addEventListener("trade", handler((t) => addTrade(t)));
  source.addEventListener("order", handler(onOrder));
  source.onopen = () => { stats.connected = true; setStatus("live", "live"); };
  source.onerror = () => {
    stats.connected = false;
    if (source.readyState === EventSource.CLOSED) {
      // refused (404 venue or instrument, 429 too many streams): say so, try again a little later
      setStatus("stream refused; retrying in 5 s", "error");
      setTimeout(() => { if (state.source === source) connect(); }, 5000);
    } else {
      setStatus("reconnecting", "error");
    }
  };
  loadHistory(state.instrument);
}

function setStatus(text, cls) {
  const s = $("status");
  s.textContent = text;
  s.className = "status " + (cls || "");
}

// --- drawing (once per frame, only what changed) ---------------------------------------------------------

function drawBook() {
  const d = state.depth;
  const asks = $("asks"), bids = $("bids");
  asks.replaceChildren(); bids.replaceChildren();
  $("symbol").textContent = d ? d.symbol : "";
  $("inst-status").textContent = d ? d.status : "";
  if (!d) { $("spread").textContent = ""; return; }
  let most = 0;
  for (const l of d.asks) most = Math.max(most, Number(l.qty));
  for (const l of d.bids) most = Math.max(most, Number(l.qty));
  // the chosen client's open quantity at each price, per side: its own levels are marked
  const own = { BUY: new Map(), SELL: new Map() };
  for (const o of state.orders.values()) {
    const price = o.order_info.price;
    if (!price || !own[o.order_info.side]) continue;
    const open = Number(o.status === "NEW_PENDING" ? o.pending_qty : o.leaves_qty);
    const key = Number(price);
    own[o.order_info.side].set(key, (own[o.order_info.side].get(key) || 0) + open);
  }
  const line = (l, mine) => {
    const ownQty = mine.get(Number(l.price));
    const tr = row([[String(l.orders), "num"], [l.qty, "num"], [l.price, "num price"]]);
    const td = el("td"); const bar = el("span", null, "bar");
    bar.style.width = (most ? (100 * Number(l.qty) / most) : 0).toFixed(1) + "%";
    td.appendChild(bar); tr.appendChild(td);
    if (ownQty !== undefined) {
      tr.classList.add("own");
      tr.title = `client ${state.client}: ${ownQty} of ${l.qty} at ${l.price}`;
      tr.cells[2].prepend(el("span", "you ", "own-mark"));
    }
    return tr;
  };
  for (const l of d.asks.slice().reverse()) asks.appendChild(line(l, own.SELL));
  for (const l of d.bids) bids.appendChild(line(l, own.BUY));
  const bestBid = d.bids.length ? Number(d.bids[0].price) : null;
  const bestAsk = d.asks.length ? Number(d.asks[0].price) : null;
  $("spread").textContent = bestBid !== null && bestAsk !== null
    ? `spread ${(bestAsk - bestBid).toPrecision(6).replace(/\.?0+$/, "")}` + (d.last_price ? ` · last ${d.last_price}` : "")
    : (d.last_price ? `last ${d.last_price}` : "one side empty");
}

function drawTrades() {
  const body = $("trades");
  body.replaceChildren();
  for (let i = state.trades.length - 1; i >= 0; i--) {
    const t = state.trades[i];
    const side = t.taker_side === "BUY" ? "buy" : "sell";
    body.appendChild(row([[fmtTime(t.timestamp), ""], [t.taker_side, side], [t.price, "num " + side], [t.qty, "num"], [t.match_id, "num"]]));
  }
  $("trade-count").textContent = state.trades.length ? `(${state.trades.length})` : "";
}

// the theme's colours, read once (reading computed style in every frame would force a style pass)
const colors = {};
function readColors() {
  const css = getComputedStyle(document.documentElement);
  for (const name of ["muted", "line", "accent"]) colors[name] = css.getPropertyValue("--" + name).trim();
}

// the canvas's size in CSS pixels, read when it changes rather than in every frame (a read after the
// frame's DOM changes would force a layout)
const chartSize = { w: 640, h: 260 };

function drawChart() {
  const canvas = $("chart");
  const dpr = window.devicePixelRatio || 1;
  const { w, h } = chartSize;
  if (canvas.width !== Math.round(w * dpr) || canvas.height !== Math.round(h * dpr)) {
    canvas.width = Math.round(w * dpr); canvas.height = Math.round(h * dpr);
  }
  const g = canvas.getContext("2d");
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.clearRect(0, 0, w, h);
  const pts = state.prices;
  const last = pts.length ? pts[pts.length - 1][1] : null;
  $("last-price").textContent = last !== null ? (state.trades.length ? state.trades[state.trades.length - 1].price : String(last)) : "";
  g.font = "11px system-ui, sans-serif";
  g.fillStyle = colors.muted;
  if (!pts.length) { g.fillText("no trades yet", 12, 20); return; }
  let lo = Infinity, hi = -Infinity;
  for (const [, p] of pts) { if (p < lo) lo = p; if (p > hi) hi = p; }
  if (hi === lo) { hi += 1; lo -= 1; }
  const pad = (hi - lo) * 0.08; lo -= pad; hi += pad;
  const left = 8, right = w - 70, top = 8, bottom = h - 18;
  const x = (i) => pts.length > 1 ? left + (right - left) * i / (pts.length - 1) : right;
  const y = (p) => bottom - (bottom - top) * (p - lo) / (hi - lo);
  g.strokeStyle = colors.line; g.lineWidth = 1;
  state.ticks = niceTicks(lo, hi, state.decimals === null ? 2 : state.decimals, 4);
  for (const [v, label] of state.ticks) {
    const yy = Math.round(y(v)) + 0.5;
    g.beginPath(); g.moveTo(left, yy); g.lineTo(right, yy); g.stroke();
    g.fillText(label, right + 6, yy + 4);
  }
  g.strokeStyle = colors.accent; g.lineWidth = 1.5;
  g.beginPath();
  pts.forEach(([, p], i) => { if (i === 0) g.moveTo(x(i), y(p)); else g.lineTo(x(i), y(p)); });
  g.stroke();
  g.fillStyle = colors.accent;
  g.beginPath(); g.arc(x(pts.length - 1), y(last), 3, 0, 2 * Math.PI); g.fill();
  g.fillStyle = colors.muted;
  g.fillText(`${fmtTime(pts[0][0])} – ${fmtTime(pts[pts.length - 1][0])} UTC · ${pts.length} trades`, left, h - 4);
}

// The price axis's ticks between lo and hi: [value, label] pairs about `target` apart, on "nice" values
// (1, 2 or 5 times a power of ten), never finer than the price grid (`decimals`). Counted in whole grid
// units, so a label never shows float drift (30000.50000001).
function niceTicks(lo, hi, decimals, target) {
  const unit = Math.pow(10, -decimals);
  const raw = Math.max((hi - lo) / target / unit, 1);  // grid units between two ticks, at least one
  const mag = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = Math.round([1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw - 1e-9));
  let zeros = 0;  // a step of 50 grid units at 2 decimals is 0.5: one decimal shown
  for (let s = step; s % 10 === 0 && zeros < decimals; s /= 10) zeros++;
  const ticks = [];
  for (let u = Math.ceil(lo / unit / step - 1e-9) * step; u <= hi / unit + 1e-9; u += step) {
    ticks.push([u * unit, (u / Math.pow(10, decimals)).toFixed(decimals - zeros)]);
  }
  return ticks;
}

function drawOrders() {
  const body = $("orders");
  body.replaceChildren();
  $("client-label").textContent = state.client ? `client ${state.client} (${state.orders.size})` : "(choose a client)";
  const list = [...state.orders.values()].sort((a, b) => Number(b.id) - Number(a.id));
  for (const o of list) {
    const side = o.order_info.side === "BUY" ? "buy" : "sell";
    body.appendChild(row([[o.id, "num"], [o.order_info.side, side], [o.order_info.price || "MARKET", "num"],
      [o.status === "NEW_PENDING" ? o.pending_qty : o.leaves_qty, "num"], [o.status, ""]]));
  }
}

function drawActivity() {
  const list = $("activity");
  list.replaceChildren();
  for (const a of state.activity) list.appendChild(el("li", a.text, a.cls));
}

// the chart first: it draws on its canvas and changes no layout
const DRAW = { chart: drawChart, book: drawBook, trades: drawTrades, orders: drawOrders, activity: drawActivity };
const ORDER = Object.keys(DRAW);

let lastFrame = 0, windowStart = 0, windowEvents = 0, windowFrames = 0, windowMaxGap = 0;

function frame(now) {
  stats.frames++;
  if (lastFrame) {
    stats.frameGapMs = now - lastFrame;
    windowMaxGap = Math.max(windowMaxGap, stats.frameGapMs);
  }
  lastFrame = now;
  if (state.dirty.size) {
    const t0 = performance.now();
    for (const p of ORDER) if (state.dirty.has(p)) DRAW[p]();
    state.dirty.clear();
    const spent = performance.now() - t0;
    stats.renders++; stats.renderMs += spent; stats.maxRenderMs = Math.max(stats.maxRenderMs, spent);
  }
  if (now - windowStart >= 1000) {
    const secs = (now - windowStart) / 1000;
    stats.eventsPerSecond = Math.round((stats.events - windowEvents) / secs);
    stats.framesPerSecond = Math.round((stats.frames - windowFrames) / secs);
    stats.maxFrameGapMs = Math.round(windowMaxGap);
    windowStart = now; windowEvents = stats.events; windowFrames = stats.frames; windowMaxGap = 0;
    $("stats").textContent = `${stats.eventsPerSecond} events/s · ${stats.framesPerSecond} frames/s · ` +
      `longest frame gap ${stats.maxFrameGapMs} ms · last event id ${stats.lastEventId || "-"}`;
  }
  requestAnimationFrame(frame);
}

// --- start ------------------------------------------------------------------------------------------

async function loadInstruments() {
  const select = $("instrument");
  select.replaceChildren();
  try {
    const resp = await control("/instruments");
    for (const inst of await resp.json()) {
      const opt = el("option", `${inst.symbol} (${inst.instrument_id})`);
      opt.value = inst.instrument_id;
      select.appendChild(opt);
    }
  } catch (e) { setStatus("could not list instruments", "error"); }
  if (state.instrument && ![...select.options].some((o) => o.value === state.instrument)) {
    const opt = el("option", state.instrument); opt.value = state.instrument; select.appendChild(opt);
  }
  if (!state.instrument && select.options.length) state.instrument = select.options[0].value;
  select.value = state.instrument;
}

function readForm() {
  state.venue = $("venue").value.trim();
  state.instrument = $("instrument").value;
  state.client = $("client").value.trim();
  const url = new URL(window.location.href);
  url.search = query({ instrument: state.instrument, client: state.client, once: state.once ? "1" : "" });
  history.replaceState(null, "", url);
}

async function start() {
  const params = new URLSearchParams(window.location.search);
  state.venue = params.get("venue") || "default";
  state.instrument = params.get("instrument") || "";
  state.client = params.get("client") || "";
  state.once = params.has("once") && params.get("once") !== "0";
  // after the #: a browser never sends it, so the token stays out of the page's own request and logs
  state.token = new URLSearchParams(window.location.hash.slice(1)).get("token") || "";
  $("venue").value = state.venue;
  $("client").value = state.client;
  $("controls").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const venue = state.venue;
    readForm();
    if (state.venue !== venue) { state.instrument = ""; await loadInstruments(); readForm(); }
    connect();
  });
  readColors();
  const canvas = $("chart");
  new ResizeObserver(() => {
    chartSize.w = canvas.clientWidth || 640; chartSize.h = canvas.clientHeight || 260;
    mark("chart");
  }).observe(canvas);
  requestAnimationFrame(frame);
  await loadInstruments();
  connect();
}

start();
