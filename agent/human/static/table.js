// The web table. The server (agent/human/web.py) sends the whole table as one
// JSON message ("type": "table") after every change; this page only draws it
// and sends back {"type": "act", ...} or {"type": "next"}. Nothing is kept here
// that the server does not also hold, so a reload or a reconnect resumes the
// hand exactly: the page simply draws the next table it receives.
"use strict";

const SUITS = { c: "♣", d: "♦", h: "♥", s: "♠" };
const RED = { d: true, h: true };
const $ = (id) => document.getElementById(id);
const token = new URLSearchParams(location.search).get("token") || "";
const POLICY_VIOLATION = 1008; // the close code of a refused token (agent/human/web.py)

let socket = null;
let table = null;
let retries = 0;
let connections = 0; // how many times this page has (re)connected
let clockDeadline = null;
let raiseDecision = null; // the decision the raise box was filled for
let sent = null; // the decision an action was sent for (buttons wait for the answer)
let nextSent = false; // "next" was sent for the finished hand on the table

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function cardNode(text) {
  if (!text) return el("span", "card back");
  const node = el("span", "card" + (RED[text[1]] ? " red" : ""));
  node.dataset.card = text;
  node.title = text;
  node.append(el("span", "rank", text[0] === "T" ? "10" : text[0]), el("span", "suit", SUITS[text[1]]));
  return node;
}

function miniCards(cards) {
  const span = el("span");
  cards.forEach((c) => span.append(el("span", "mini" + (RED[c[1]] ? " red" : ""), c[0] + SUITS[c[1]])));
  return span;
}

function signed(x) {
  const r = Math.round(x * 1000) / 1000;
  return (r > 0 ? "+" : "") + r;
}

// -- connection ---------------------------------------------------------------

function connect() {
  // Beside the page (/ws for `arena play`, /tables/ID/ws in the hosted arena).
  const url = new URL(`ws?token=${encodeURIComponent(token)}`, location.href);
  url.protocol = location.protocol === "https:" ? "wss:" : "ws:";
  socket = new WebSocket(url);
  socket.onopen = () => {
    retries = 0;
    connections += 1;
    setConn(true);
  };
  socket.onmessage = (event) => {
    const message = JSON.parse(event.data);
    if (message.type === "table") {
      table = message;
      sent = null;
      nextSent = false;
      render();
    } else if (message.type === "error") {
      sent = null;
      nextSent = false;
      $("error").textContent = message.message;
      renderActions();
    }
  };
  socket.onclose = (event) => {
    if (event.code === POLICY_VIOLATION) {
      refused(event.reason);
      return;
    }
    setConn(false);
    const wait = Math.min(3000, 200 * 2 ** retries++);
    setTimeout(connect, wait);
  };
}

// The server refused this page (a missing or wrong token): say why, and stop
// retrying, since no retry with the same address can succeed.
function refused(reason) {
  const conn = $("conn");
  conn.className = "down";
  conn.textContent = "refused";
  $("fatal").textContent = reason || "the table refused this page";
  $("fatal").hidden = false;
}

function setConn(up) {
  const conn = $("conn");
  conn.className = up ? "up" : "down";
  conn.textContent = up ? "connected" : "reconnecting…";
}

function send(message) {
  if (socket && socket.readyState === WebSocket.OPEN) {
    socket.send(JSON.stringify(message));
    return true;
  }
  $("error").textContent = "not connected: the page is reconnecting";
  return false;
}

// -- drawing ------------------------------------------------------------------

function render() {
  const t = table;
  $("title").textContent = t.title;
  const hand = t.hand;
  $("hand-number").textContent = hand ? `hand ${hand.number} of ${t.hands}` : "waiting for the dealer…";
  const r = t.result;
  let result = `${signed(r.total)} chips over ${r.hands} hand${r.hands === 1 ? "" : "s"}`;
  if (r.ci95 !== null) result += ` · ${signed(r.mean)} ± ${Math.round(r.ci95 * 1000) / 1000} ${r.unit} (95%)`;
  else if (r.hands > 0) result += ` · 95% interval after ${r.interval_hands} hands`;
  $("result").textContent = result;
  renderKeys(t.game);
  renderTable(t, hand);
  renderBetting(hand);
  renderHistory(t.history);
  renderActions();
  clockDeadline = t.clock_ms === null ? null : performance.now() + t.clock_ms;
  tick();
}

function playerNode(p, hand, holeCards) {
  const node = el("div", "player");
  node.dataset.name = p.name;
  if (p.to_act) node.classList.add("to-act");
  if (p.folded) node.classList.add("folded");
  node.append(el("div", "name", p.you && p.name !== "you" ? `${p.name} (you)` : p.name));
  if (p.button) {
    const button = el("span", "dealer", "D");
    button.title = "dealer button: last to act after the first round";
    node.append(button);
  }
  const cards = el("div", "cards");
  if (p.cards.length) p.cards.forEach((c) => cards.append(cardNode(c)));
  else if (!p.folded) for (let i = 0; i < holeCards; i++) cards.append(cardNode(null));
  node.append(cards);
  let info = `in pot ${p.spent}`;
  if (p.stack !== null) info += ` · stack ${p.stack}`;
  if (p.folded) info += " · folded";
  else if (p.all_in) info += " · all-in";
  node.append(el("div", "info", info));
  if (p.best !== null) node.append(el("div", "best", p.best));
  if (p.value !== null) {
    node.append(el("div", "value " + (p.value > 0 ? "pos" : p.value < 0 ? "neg" : ""), signed(p.value)));
  }
  return node;
}

function renderTable(t, hand) {
  const opponents = $("opponents");
  const me = $("me");
  const board = $("board");
  opponents.replaceChildren();
  me.replaceChildren();
  board.replaceChildren();
  $("pot").textContent = "";
  $("banner").textContent = "";
  $("banner").className = "";
  if (!hand) return;
  $("felt").classList.toggle("many", hand.players.length > 3);
  const you = hand.players.findIndex((p) => p.you);
  // opponents in seat order starting after you, so the table reads clockwise
  const order = hand.players.slice(you + 1).concat(hand.players.slice(0, you));
  order.forEach((p) => opponents.append(playerNode(p, hand, t.game.hole_cards)));
  me.append(playerNode(hand.players[you], hand, t.game.hole_cards));
  hand.board.forEach((c) => board.append(cardNode(c)));
  $("pot").textContent = `pot ${hand.pot}`;
  const mine = hand.players[you];
  if (hand.finished) {
    const v = mine.value;
    const banner = $("banner");
    const how = hand.showdown ? "at showdown" : mine.folded ? "(you folded)" : "(they folded)";
    banner.textContent = v > 0 ? `You won ${v} ${how}` : v < 0 ? `You lost ${-v} ${how}` : `Split pot ${how}`;
    banner.className = v > 0 ? "won" : v < 0 ? "lost" : "";
  }
}

// The key hints of what this game allows: no raise sizes in a limit game.
function renderKeys(game) {
  const keys = [["f", "fold"], ["c", "check/call"], ["r", "raise"]];
  if (!game.limit) {
    keys.push(["digits", "type a raise-to amount"], ["h", "½ pot"], ["p", "pot"], ["a", "all-in"]);
  }
  keys.push(["n/Enter", "next hand"]);
  const box = $("keys");
  box.replaceChildren("keys:");
  keys.forEach(([key, what], i) => box.append(i ? " · " : " ", el("b", "", key), ` ${what}`));
}

function renderBetting(hand) {
  const box = $("betting");
  box.replaceChildren();
  if (!hand) return;
  hand.betting.forEach((round, i) => {
    const line = el("div", "round");
    line.append(el("b", "", `round ${i + 1}: `));
    line.append(round.length ? round.map((a) => `${a.name} ${a.text}`).join(", ") : "—");
    box.append(line);
  });
}

function renderHistory(history) {
  const list = $("history");
  list.replaceChildren();
  history.forEach((h) => {
    const item = el("li");
    item.append(`#${h.hand} `, miniCards(h.cards));
    if (h.board.length) item.append(" | ", miniCards(h.board));
    item.append(` ${h.betting} `);
    h.shown.forEach((s) => item.append(` ${s.name} `, miniCards(s.cards)));
    item.append(" ", el("span", h.value > 0 ? "pos" : h.value < 0 ? "neg" : "", signed(h.value)));
    list.append(item);
  });
}

function renderActions() {
  const t = table;
  if (!t) return;
  const legal = t.legal;
  const waiting = sent !== null;
  $("actions").hidden = legal === null;
  $("btn-next").hidden = !t.waiting_next;
  const status = $("status");
  if (t.over) {
    status.textContent = "The match is over." + (t.message ? " " + t.message : "");
  } else if (t.waiting_next) {
    status.textContent = "Hand finished.";
  } else if (legal) {
    status.textContent = waiting ? "Sent…" : "Your turn.";
  } else if (t.hand) {
    const actor = t.hand.players.find((p) => p.to_act);
    status.textContent = actor ? `Waiting for ${actor.name}…` : "Waiting for the next hand…";
  } else {
    status.textContent = "Waiting for the dealer…";
  }
  if (!legal) {
    raiseDecision = null;
    return;
  }
  $("btn-fold").hidden = !legal.fold;
  $("btn-call").textContent = legal.call ? `Call ${legal.call}` : "Check";
  const raise = legal.raise;
  $("btn-raise").hidden = raise === null;
  const noLimit = raise !== null && !t.game.limit;
  $("raise-box").hidden = !noLimit;
  if (raise !== null && raiseDecision !== legal.decision) {
    raiseDecision = legal.decision;
    const slider = $("raise-slider");
    slider.min = raise.min;
    slider.max = raise.max;
    slider.step = 1;
    setRaise(raise.min);
  }
  if (raise !== null) $("btn-raise").textContent = `Raise to ${noLimit ? raiseValue() : raise.min}`;
  for (const id of ["btn-fold", "btn-call", "btn-raise"]) $(id).disabled = waiting;
}

function raiseValue() {
  return parseInt($("raise-to").value, 10);
}

function setRaise(value) {
  $("raise-to").value = value;
  $("raise-slider").value = value;
  if (table && table.legal && table.legal.raise) $("btn-raise").textContent = `Raise to ${value}`;
}

function tick() {
  const clock = $("clock");
  if (clockDeadline === null) {
    clock.hidden = true;
    return;
  }
  const left = Math.max(0, clockDeadline - performance.now());
  const seconds = Math.ceil(left / 1000);
  clock.hidden = false;
  clock.textContent = `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")} left`;
  clock.classList.toggle("low", seconds <= 15);
}

// -- acting -------------------------------------------------------------------

function act(action) {
  const legal = table && table.legal;
  if (!legal || sent !== null) return;
  const message = { type: "act", decision: legal.decision, action: action };
  if (action === "fold" && !legal.fold) return;
  if (action === "raise") {
    if (!legal.raise) return;
    if (!table.game.limit) {
      const size = raiseValue();
      if (!Number.isInteger(size) || size < legal.raise.min || size > legal.raise.max) {
        $("error").textContent = `raise to a whole number from ${legal.raise.min} to ${legal.raise.max}`;
        return;
      }
      message.size = size;
    }
  }
  $("error").textContent = "";
  if (send(message)) {
    sent = legal.decision;
    renderActions();
  }
}

function next() {
  if (table && table.waiting_next && !nextSent && send({ type: "next" })) nextSent = true;
}

function shortcut(which) {
  const raise = table && table.legal && table.legal.raise;
  if (raise && !table.game.limit) setRaise(raise[which]);
}

$("btn-fold").onclick = () => act("fold");
$("btn-call").onclick = () => act("call");
$("btn-raise").onclick = () => act("raise");
$("btn-next").onclick = next;
$("btn-half").onclick = () => shortcut("half_pot");
$("btn-pot").onclick = () => shortcut("pot");
$("btn-allin").onclick = () => shortcut("all_in");
$("raise-slider").oninput = () => setRaise($("raise-slider").value);
$("raise-to").oninput = () => {
  const value = raiseValue();
  if (Number.isInteger(value)) {
    $("raise-slider").value = value;
    $("btn-raise").textContent = `Raise to ${value}`;
  }
};

document.addEventListener("keydown", (event) => {
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  const inBox = event.target === $("raise-to");
  const key = event.key.toLowerCase();
  if (inBox) {
    if (key === "enter") {
      event.preventDefault();
      act("raise");
    } else if (key === "escape") {
      $("raise-to").blur();
    }
    return;
  }
  if (table && table.waiting_next && (key === "n" || key === "enter" || key === " ")) {
    event.preventDefault();
    next();
    return;
  }
  if (key === "f") act("fold");
  else if (key === "c" || key === "k") act("call");
  else if (key === "r") act("raise");
  else if (key === "h") shortcut("half_pot");
  else if (key === "p") shortcut("pot");
  else if (key === "a") shortcut("all_in");
  else if (/^[0-9]$/.test(key) && table && table.legal && table.legal.raise && !table.game.limit) {
    event.preventDefault();
    const box = $("raise-to");
    box.value = key;
    box.focus();
    box.dispatchEvent(new Event("input"));
  }
});

setInterval(tick, 250);
connect();
