// The web table. The server (agent/human/web.py) sends the whole table as one
// JSON message ("type": "table") after every change (and, in the hosted arena,
// {"type": "waiting"} with why while its match has not begun); this page only
// draws it and sends back {"type": "act", ...}, {"type": "next"} or {"type": "leave"}. Nothing is kept here
// that the server does not also hold, so a reload or a reconnect resumes the
// hand exactly: the page simply draws the next table it receives. Every number
// (street amounts, chips in front, raise bounds and presets, clocks) comes from
// the seat (agent/human/seat.py, agent/human/streets.py); the page only shows
// chips as big blinds when asked to, and adds the street's base to the amount
// picked, since the dealer wants a raise as the hand's total.
"use strict";

const SUITS = { c: "♣", d: "♦", h: "♥", s: "♠" };
const RED = { d: true, h: true };
const $ = (id) => document.getElementById(id);
const token = new URLSearchParams(location.search).get("token") || "";
const POLICY_VIOLATION = 1008; // the close code of a refused token (agent/human/web.py)
// How long the last actions of a street stay on the table before its next
// cards: a bot answers in milliseconds, and its call would otherwise arrive
// together with the flop and never be seen.
const PAUSE_MS = 900;
// How long each action of a replayed hand stays up.
const REPLAY_MS = 800;
// The presets the keyboard reaches (labels as the seat sends them).
const PRESET_KEYS = { m: "min", h: "½ pot", t: "⅔ pot", p: "pot", x: "2.5×", a: "all-in" };
const UNITS_KEY = "arena-play-units";
const COLOURS_KEY = "arena-play-four-colours";
const SOUND_KEY = "arena-play-sound";

let socket = null;
let table = null; // the latest table received
let drawn = null; // the latest table drawn in full (what a pause compares with)
let pause = null; // {street, timer} while a closed street's last actions are shown
let replay = null; // {hand, step, timer} while the finished hand is replayed on the felt
let retries = 0;
let connections = 0; // how many times this page has (re)connected
let clockDeadline = null;
let seatClocks = []; // [{node, deadline, ms}] of the seats' clocks drawn
let raiseDecision = null; // the decision the raise box was filled for
let sent = null; // the decision an action was sent for (buttons wait for the answer)
let nextSent = false; // "next" was sent for the finished hand on the table
let inBigBlinds = remembered(UNITS_KEY) !== "chips";
let fourColours = remembered(COLOURS_KEY) === "on";
let sound = remembered(SOUND_KEY) === "on"; // off unless the person turns it on
let audio = null; // the AudioContext, made on the click that turns sound on (browsers want a gesture)
let beeped = null; // the decision the tone was played for
let beeps = 0; // tones played (the tests read it)

// The person's display choices outlive a reload where the browser keeps
// storage (not in every private window: then they last as long as the page).
function remembered(key) {
  try {
    return localStorage.getItem(key);
  } catch {
    return null;
  }
}

function remember(key, value) {
  try {
    localStorage.setItem(key, value);
  } catch {
    // nothing kept: the choice lasts as long as the page
  }
}

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

// Ten is "T" here as in the history and the logs.
function cardNode(text) {
  if (!text) return el("span", "card back");
  const node = el("span", `card suit-${text[1]}` + (RED[text[1]] ? " red" : ""));
  node.dataset.card = text;
  node.title = text;
  node.append(el("span", "rank", text[0]), el("span", "suit", SUITS[text[1]]));
  return node;
}

function miniCards(cards) {
  const span = el("span");
  cards.forEach((c) => span.append(el("span", `mini suit-${c[1]}` + (RED[c[1]] ? " red" : ""), c[0] + SUITS[c[1]])));
  return span;
}

function round3(x) {
  return Math.round(x * 1000) / 1000;
}

// -- amounts: chips, or big blinds where the game has blinds ------------------

function bigBlind() {
  return table && table.game.big_blind;
}

function amount(chips) {
  const bb = bigBlind();
  if (bb && inBigBlinds) return `${Math.round((chips / bb) * 100) / 100} BB`;
  return `${round3(chips)}`;
}

function signedAmount(chips) {
  return (chips > 0 ? "+" : chips < 0 ? "-" : "") + amount(Math.abs(chips));
}

function clockText(ms) {
  const seconds = Math.ceil(ms / 1000);
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")}`;
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
      receive(message);
    } else if (message.type === "waiting") {
      renderWaiting(message.message);
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

// The hosted arena's match has not begun (it waits in the queue, or for its
// bot to start): why, and the leave button, which cancels it (nothing counts).
function renderWaiting(why) {
  if (table) return;
  $("status").textContent = `The match has not begun: ${why}.`;
  $("btn-leave").hidden = false;
}

// The server refused this page (a missing or wrong token): say why, and stop
// retrying, since no retry with the same address can succeed.
function refused(reason) {
  const conn = $("conn");
  conn.className = "down";
  conn.textContent = "refused";
  $("fatal").textContent = reason || "the table refused this page";
  $("fatal").hidden = false;
  if (!table) {
    $("status").textContent = ""; // a match that had not begun: nothing waits any more
    $("btn-leave").hidden = true;
  }
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

// A new table: drawn at once, unless it closes a street whose last actions by
// another seat were never drawn; then that street stays up for PAUSE_MS first.
function receive(message) {
  table = message;
  sent = null;
  nextSent = false;
  const clock = message.clock_ms;
  clockDeadline = clock === null ? null : performance.now() + clock;
  if (replay !== null && (!message.hand || message.hand.id !== replay.hand.id)) stopReplay(); // the table moved on
  if (pause !== null) return; // the pause draws the latest table when it ends
  const street = closedStreet(drawn, message);
  drawn = message;
  if (street === null) {
    render();
    return;
  }
  pause = { street, timer: setTimeout(endPause, PAUSE_MS) };
  render();
}

function endPause() {
  pause = null;
  drawn = table;
  render();
}

function lastStreetWithActions(hand) {
  let street = hand.streets.length - 1;
  while (street > 0 && !hand.streets[street].actions.length) street--;
  return street;
}

function closedStreet(before, after) {
  if (!before || !before.hand || !after.hand || before.hand.id !== after.hand.id) return null;
  const hand = after.hand;
  const street = lastStreetWithActions(hand);
  if (street >= hand.round) return null; // still on the table in the new one
  const seen = before.hand.streets[street] ? before.hand.streets[street].actions.length : 0;
  const fresh = hand.streets[street].actions.slice(seen);
  return fresh.some((a) => !hand.players[a.player].you) ? street : null;
}

// -- drawing ------------------------------------------------------------------

function render() {
  const t = table;
  renderSettings();
  ring(t);
  $("title").textContent = t.title;
  const hand = replay !== null ? handAt(replay.hand, replay.step) : t.hand;
  $("hand-number").textContent = hand ? `hand ${hand.number} of ${t.hands}` : "waiting for the dealer…";
  document.body.classList.toggle("no-limit", !t.game.limit);
  renderUnits(t.game);
  renderResult(t.result);
  renderSession(t);
  renderNote(t.game);
  renderKeys(t.game);
  renderTable(t, hand);
  renderBetting(t, hand);
  renderHistory(t.history);
  renderActions();
  renderEnd(t);
  tick();
}

// The end of the match: why it ended (in the status line), the result with
// its interval, and, where the server gives them (the hosted arena, once the
// match's end is recorded and its slot free), the match page and another
// table like this one.
function renderEnd(t) {
  $("btn-leave").hidden = t.over;
  $("end").hidden = !t.over;
  if (!t.over) return;
  $("end-result").textContent = `Your result: ${resultText(t.result)}`;
  const links = t.links;
  $("end-links").hidden = !links;
  if (!links) return;
  $("end-match").href = links.match;
  const form = $("again");
  form.action = links.again.action;
  form.querySelectorAll("input").forEach((input) => input.remove());
  Object.entries(links.again.fields).forEach(([name, value]) => {
    const input = el("input");
    input.type = "hidden";
    input.name = name;
    input.value = String(value);
    form.prepend(input);
  });
}

function renderUnits(game) {
  const button = $("btn-units");
  button.hidden = !game.big_blind;
  button.textContent = inBigBlinds ? "show chips" : "show BB";
}

function resultText(r) {
  let result = `${signedAmount(r.total)}${bigBlind() && inBigBlinds ? "" : " chips"} over ${r.hands} hand${r.hands === 1 ? "" : "s"}`;
  if (r.ci95 !== null) result += ` · ${r.mean > 0 ? "+" : ""}${round3(r.mean)} ± ${round3(r.ci95)} ${r.unit} (95%)`;
  else if (r.hands > 0) result += ` · ${r.interval_note}`; // the server's rule, in its words
  return result;
}

function renderResult(r) {
  $("result").textContent = resultText(r);
}

// The session: hands, net, the win rate with its interval once it has one
// (BB/100 where the game has blinds), and the running total as a line.
function renderSession(t) {
  const r = t.result;
  const net = `net ${signedAmount(r.total)}${bigBlind() && inBigBlinds ? "" : " chips"}`;
  const figures = [`${r.hands} hand${r.hands === 1 ? "" : "s"}`, net];
  if (r.ci95 !== null) {
    // mbb/g is a thousandth of a big blind a hand: BB/100 is a tenth of it
    const [mean, ci, unit] = r.unit === "mbb/g" ? [r.mean / 10, r.ci95 / 10, "BB/100"] : [r.mean, r.ci95, r.unit];
    figures.push(`${mean > 0 ? "+" : ""}${round3(mean)} ± ${round3(ci)} ${unit} (95%)`);
  } else if (r.hands > 0) {
    figures.push(r.interval_note);
  }
  $("figures").textContent = figures.join(" · ");
  drawGraph(t.graph);
}

function drawGraph(points) {
  const svg = $("graph");
  svg.replaceChildren();
  if (!points.length) return;
  const ns = "http://www.w3.org/2000/svg";
  const all = [[0, 0], ...points];
  const low = Math.min(0, ...all.map((p) => p[1]));
  const high = Math.max(0, ...all.map((p) => p[1]));
  const span = high - low || 1;
  const last = all[all.length - 1][0] || 1;
  const x = (hand) => (hand / last) * 200;
  const y = (total) => 58 - ((total - low) / span) * 56;
  const zero = document.createElementNS(ns, "line");
  zero.setAttribute("class", "zero");
  zero.setAttribute("x1", "0");
  zero.setAttribute("x2", "200");
  zero.setAttribute("y1", String(y(0)));
  zero.setAttribute("y2", String(y(0)));
  const line = document.createElementNS(ns, "polyline");
  line.setAttribute("class", points[points.length - 1][1] >= 0 ? "up" : "down");
  line.setAttribute("points", all.map(([hand, total]) => `${x(hand).toFixed(1)},${y(total).toFixed(1)}`).join(" "));
  svg.append(zero, line);
}

function renderSettings() {
  document.body.classList.toggle("four-colour", fourColours);
  $("btn-colours").setAttribute("aria-pressed", String(fourColours));
  $("btn-sound").setAttribute("aria-pressed", String(sound));
}

// A short tone when a decision opens for the person (once a decision, sound on).
function ring(t) {
  const open = t.legal && !t.waiting_next && pause === null ? t.legal.decision : null;
  if (open === null || open === beeped) return;
  beeped = open;
  if (!sound || audio === null) return;
  const tone = audio.createOscillator();
  const gain = audio.createGain();
  tone.frequency.value = 660;
  gain.gain.value = 0.15;
  tone.connect(gain).connect(audio.destination);
  tone.start();
  tone.stop(audio.currentTime + 0.12);
  beeps += 1;
}

// No-limit stacks are the game's at the start of every hand, whatever the
// hands before won or lost: a player from an online room expects them to carry.
function renderNote(game) {
  const note = $("note");
  note.hidden = game.stack === null;
  if (game.stack !== null) {
    const bb = game.big_blind ? ` (${game.stack / game.big_blind} BB)` : "";
    note.textContent = `Stacks reset to ${game.stack} chips${bb} at the start of every hand (the ACPC rule).`;
  }
}

// -- the replay of a finished hand ---------------------------------------------

function replaySteps(hand) {
  return hand.streets.reduce((count, street) => count + street.actions.length, 0);
}

// The finished ``hand`` as it stood after its first ``step`` actions, drawn
// from the table the seat sent after each (its chips in front and its pot):
// the opponents' cards face down, the board through the street acted on.
function handAt(hand, step) {
  let left = step;
  let round = 0;
  const streets = hand.streets.map((street, i) => {
    const taken = Math.min(left, street.actions.length);
    left -= taken;
    if (taken > 0) round = i;
    const front = taken ? street.actions[taken - 1].front : street.start;
    return { name: street.name, actions: street.actions.slice(0, taken), front };
  });
  const done = streets.flatMap((street) => street.actions);
  const last = done[done.length - 1];
  const players = hand.players.map((p, i) => ({
    ...p,
    cards: p.you ? p.cards : [],
    folded: done.some((a) => a.player === i && a.action === "fold"),
    all_in: done.some((a) => a.player === i && a.all_in),
    stack: null,
    best: null,
    value: null,
    to_act: false,
    clock_ms: null,
  }));
  const pot = last ? last.pot : hand.streets[0].start_pot;
  return { ...hand, streets, players, round, pot, finished: false, showdown: false };
}

function startReplay() {
  const hand = table && table.hand;
  if (!hand || !hand.finished || pause !== null) return;
  stopReplay();
  replay = { hand, step: 0, timer: setInterval(stepReplay, REPLAY_MS) };
  render();
}

function stepReplay() {
  replay.step += 1;
  if (replay.step > replaySteps(replay.hand)) stopReplay();
  render();
}

function stopReplay() {
  if (replay === null) return;
  clearInterval(replay.timer);
  replay = null;
}

// The street drawn: the one a pause holds, else the current one; on a finished
// hand the last one anybody acted on, so its actions stay in view.
function streetShown(hand) {
  if (pause !== null) return pause.street;
  return hand.finished ? lastStreetWithActions(hand) : hand.round;
}

function boardThrough(t, street) {
  return t.game.board_cards.slice(0, street + 1).reduce((a, b) => a + b, 0);
}

function playerNode(t, hand, p, i, street) {
  const node = el("div", "player");
  node.dataset.name = p.name;
  if (p.to_act && pause === null) node.classList.add("to-act");
  if (p.folded) node.classList.add("folded");
  const actions = hand.streets[street].actions.filter((a) => a.player === i);
  const last = actions[actions.length - 1];
  const bubble = el("div", "bubble", last ? bubbleText(last) : "");
  if (last) bubble.classList.add(last.action);
  else bubble.classList.add("empty");
  node.append(bubble);
  node.append(el("div", "name", p.you && p.name !== "you" ? `${p.name} (you)` : p.name));
  if (p.button) {
    const button = el("span", "dealer", "D");
    button.title = "dealer button: last to act after the first round";
    node.append(button);
  }
  const cards = el("div", "cards");
  if (p.cards.length) p.cards.forEach((c) => cards.append(cardNode(c)));
  else if (!p.folded) for (let j = 0; j < t.game.hole_cards; j++) cards.append(cardNode(null));
  node.append(cards);
  let info = p.stack !== null ? `stack ${amount(p.stack)}` : "";
  if (p.folded) info += info ? " · folded" : "folded";
  else if (p.all_in) info += " · all-in";
  node.append(el("div", "info", info));
  // every seat's clock: counting down for the seat to act, else what it has for its next action
  const time = el("div", "time");
  if (p.clock_ms !== null) {
    const clock = el("span", "seat-clock", clockText(p.clock_ms));
    const running = p.to_act && pause === null;
    time.title = running ? "time left for this action" : "time this seat has for its next action";
    seatClocks.push({ node: clock, ms: p.clock_ms, deadline: running ? performance.now() + p.clock_ms : null });
    if (running) clock.classList.add("running");
    time.append("time ", clock);
  }
  node.append(time);
  node.append(el("div", "best", p.best !== null ? p.best : ""));
  const value = el("div", "value", p.value !== null ? signedAmount(p.value) : "");
  if (p.value !== null) value.classList.add(p.value > 0 ? "pos" : p.value < 0 ? "neg" : "even");
  node.append(value);
  const front = hand.streets[street].front[i];
  const chips = el("div", "front", front > 0 ? amount(front) : "");
  chips.title = "chips in front: put in this street";
  if (front <= 0) chips.classList.add("empty");
  node.append(chips);
  return node;
}

function bubbleText(a) {
  return a.verb + (a.amount ? ` ${amount(a.amount)}` : "") + (a.all_in ? " (all-in)" : "");
}

function actionText(a) {
  return `${a.name} ${bubbleText(a)}`;
}

function renderTable(t, hand) {
  const opponents = $("opponents");
  const me = $("me");
  const board = $("board");
  seatClocks = [];
  opponents.replaceChildren();
  me.replaceChildren();
  board.replaceChildren();
  $("pot").textContent = "";
  $("banner").textContent = "";
  $("banner").className = "";
  if (!hand) return;
  $("felt").classList.toggle("many", hand.players.length > 3);
  const street = streetShown(hand);
  const you = hand.players.findIndex((p) => p.you);
  // opponents in seat order starting after you, so the table reads clockwise
  const order = [...hand.players.keys()].slice(you + 1).concat([...hand.players.keys()].slice(0, you));
  order.forEach((i) => opponents.append(playerNode(t, hand, hand.players[i], i, street)));
  me.append(playerNode(t, hand, hand.players[you], you, street));
  hand.board.slice(0, boardThrough(t, street)).forEach((c) => board.append(cardNode(c)));
  const pot = $("pot");
  pot.append(el("span", "street", hand.streets[street].name), ` · pot ${amount(hand.pot)}`);
  const mine = hand.players[you];
  if (hand.finished && pause === null) {
    const v = mine.value;
    const banner = $("banner");
    const how = hand.showdown ? "at showdown" : mine.folded ? "(you folded)" : "(they folded)";
    const size = amount(Math.abs(v));
    banner.textContent = v > 0 ? `You won ${size} ${how}` : v < 0 ? `You lost ${size} ${how}` : `Split pot ${how}`;
    banner.className = v > 0 ? "won" : v < 0 ? "lost" : "";
  }
}

// The key hints of what this game allows: no raise sizes in a limit game
// (hidden on touch screens, which have no keys: table.css).
function renderKeys(game) {
  const keys = [["f", "fold"], ["c", "check/call"], ["r", "bet/raise"]];
  if (!game.limit) {
    keys.push(["digits", "type an amount"], ["m h t p x a", "min, ½, ⅔, pot, 2.5×, all-in"]);
  }
  keys.push(["n/Enter", "next hand"], ["y", "replay it"]);
  const box = $("keys");
  box.replaceChildren("keys:");
  keys.forEach(([key, what], i) => box.append(i ? " · " : " ", el("b", "", key), ` ${what}`));
}

// The hand so far, street by street, as a hand history reads.
function renderBetting(t, hand) {
  const box = $("betting");
  box.replaceChildren();
  if (!hand) return;
  hand.streets.forEach((street, i) => {
    if (pause !== null && i > pause.street) return;
    const line = el("div", "round");
    line.append(el("b", "", `${street.name}: `));
    const dealt = hand.board.slice(boardThrough(t, i - 1), boardThrough(t, i));
    if (i > 0 && dealt.length) line.append(miniCards(dealt), " ");
    line.append(street.actions.length ? street.actions.map(actionText).join(", ") : "—");
    box.append(line);
  });
}

function renderHistory(history) {
  const list = $("history");
  list.replaceChildren();
  history.forEach((h) => {
    const item = el("li");
    const head = el("div", "head");
    head.append(`#${h.hand} `, miniCards(h.cards));
    if (h.board.length) head.append(" | ", miniCards(h.board));
    h.shown.forEach((s) => head.append(` · ${s.name} `, miniCards(s.cards)));
    head.append(" ", el("span", h.value > 0 ? "pos" : h.value < 0 ? "neg" : "", signedAmount(h.value)));
    item.append(head);
    const story = h.streets
      .filter((s) => s.actions.length)
      .map((s) => `${s.name}: ${s.actions.map(actionText).join(", ")}`)
      .join("; ");
    const words = el("div", "story", story);
    words.title = h.betting; // the ACPC betting, as the logs have it
    item.append(words);
    list.append(item);
  });
}

function renderActions() {
  const t = table;
  if (!t) return;
  const legal = pause === null ? t.legal : null;
  const waiting = sent !== null;
  $("actions").hidden = legal === null || replay !== null;
  $("btn-next").hidden = !t.waiting_next || pause !== null;
  const replayable = t.hand !== null && t.hand.finished && pause === null;
  $("btn-replay").hidden = !replayable;
  $("btn-replay").firstChild.textContent = replay !== null ? "Stop the replay " : "Replay the hand ";
  const status = $("status");
  if (replay !== null) {
    status.textContent = `Replay of hand ${replay.hand.number}: ${replay.step} of ${replaySteps(replay.hand)} actions`;
  } else if (t.over) {
    status.textContent = "The match is over." + (t.message ? " " + t.message : "");
  } else if (pause !== null) {
    status.textContent = "";
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
  $("btn-call").textContent = legal.call ? `Call ${amount(legal.call)}` : "Check";
  const raise = legal.raise;
  $("btn-raise").hidden = raise === null;
  const noLimit = raise !== null && !t.game.limit;
  $("raise-box").hidden = !noLimit;
  if (noLimit) renderPresets(raise);
  if (raise !== null && raiseDecision !== legal.decision) {
    raiseDecision = legal.decision;
    const slider = $("raise-slider");
    slider.min = 0;
    slider.max = sliderSteps(raise);
    slider.step = 1;
    setRaise(raise.min - raise.base);
  }
  if (raise !== null) labelRaise(noLimit ? raiseValue() : raise.min - raise.base);
  for (const id of ["btn-fold", "btn-call", "btn-raise"]) $(id).disabled = waiting;
}

function renderPresets(raise) {
  const box = $("presets");
  box.replaceChildren();
  const keyOf = Object.fromEntries(Object.entries(PRESET_KEYS).map(([key, label]) => [label, key]));
  raise.presets.forEach(([label, to]) => {
    const button = el("button", "preset", label);
    button.type = "button";
    button.dataset.preset = label;
    button.title = `${raise.verb} ${raise.verb === "raise" ? "to " : ""}${amount(to - raise.base)}` + (keyOf[label] ? ` (key ${keyOf[label]})` : "");
    button.onclick = () => setRaise(to - raise.base);
    box.append(button);
  });
}

// The slider moves a big blind (the seat's step) at a time from the minimum;
// its last notch is all-in, which the steps may not reach exactly.
function sliderSteps(raise) {
  return Math.ceil((raise.max - raise.min) / raise.step);
}

function sliderAmount(raise, notch) {
  return notch >= sliderSteps(raise) ? raise.max - raise.base : raise.min - raise.base + notch * raise.step;
}

function sliderNotch(raise, street) {
  return Math.min(sliderSteps(raise), Math.max(0, Math.round((street + raise.base - raise.min) / raise.step)));
}

function currentRaise() {
  return table && table.legal && table.legal.raise;
}

// The box counts in the unit shown (big blinds or chips); its value in chips,
// NaN when it is not a whole number of chips.
function raiseValue() {
  const typed = Number($("raise-to").value);
  const bb = bigBlind();
  const chips = bb && inBigBlinds ? Math.round(typed * bb) : typed;
  return $("raise-to").value.trim() !== "" && Number.isInteger(chips) ? chips : NaN;
}

function setBox(chips) {
  const bb = bigBlind();
  $("raise-to").value = bb && inBigBlinds ? Math.round((chips / bb) * 100) / 100 : chips;
}

function labelRaise(street) {
  const raise = currentRaise();
  if (!raise) return;
  const verb = raise.verb === "raise" ? "Raise to" : "Bet";
  $("btn-raise").textContent = Number.isInteger(street) ? `${verb} ${amount(street)}` : verb;
}

function setRaise(street) {
  const raise = currentRaise();
  setBox(street);
  if (raise) $("raise-slider").value = sliderNotch(raise, street);
  labelRaise(street);
}

function tick() {
  const clock = $("clock");
  const now = performance.now();
  seatClocks.forEach((c) => {
    if (c.deadline !== null) c.node.textContent = clockText(Math.max(0, c.deadline - now));
  });
  if (clockDeadline === null || pause !== null) {
    clock.hidden = true;
    return;
  }
  const left = Math.max(0, clockDeadline - now);
  const seconds = Math.ceil(left / 1000);
  clock.hidden = false;
  // The dealer deals the next hand at once: if it is yours to act, its clock
  // runs while this hand's result is still up, and is shown with it.
  clock.textContent = table && table.waiting_next ? `next hand: ${clockText(left)} left to act` : `${clockText(left)} left`;
  clock.classList.toggle("low", seconds <= 15);
}

// -- acting -------------------------------------------------------------------

function act(action) {
  const legal = pause === null && table && table.legal;
  if (!legal || sent !== null) return;
  const message = { type: "act", decision: legal.decision, action: action };
  if (action === "fold" && !legal.fold) return;
  if (action === "raise") {
    const raise = legal.raise;
    if (!raise) return;
    if (!table.game.limit) {
      const street = raiseValue();
      const low = raise.min - raise.base;
      const high = raise.max - raise.base;
      if (!Number.isInteger(street) || street < low || street > high) {
        const what = raise.verb === "raise" ? "raise to" : "bet";
        $("error").textContent = `${what} an amount from ${amount(low)} to ${amount(high)}`;
        return;
      }
      message.size = street + raise.base; // the dealer counts the hand's total
    }
  }
  $("error").textContent = "";
  if (send(message)) {
    sent = legal.decision;
    renderActions();
  }
}

function next() {
  if (table && table.waiting_next && pause === null && !nextSent && send({ type: "next" })) {
    nextSent = true;
    stopReplay();
  }
}

function toggleReplay() {
  if (replay !== null) {
    stopReplay();
    render();
  } else {
    startReplay();
  }
}

function preset(label) {
  const raise = currentRaise();
  if (!raise || table.game.limit) return;
  const found = raise.presets.find(([name]) => name === label);
  if (found) setRaise(found[1] - raise.base);
}

$("btn-fold").onclick = () => act("fold");
$("btn-call").onclick = () => act("call");
$("btn-raise").onclick = () => act("raise");
$("btn-next").onclick = next;
$("btn-leave").onclick = () => {
  if (!table) {
    // a hosted match still waiting to begin: cancelled, uncharged (no hand was played)
    if (confirm("Leave the table? The match has not begun: it is cancelled, and nothing counts.")) {
      send({ type: "leave" });
    }
    return;
  }
  // the match ends there; what leaving costs (the hosted arena's abort rule) the table says after
  if (!table.over && confirm("Leave the table? The match ends here.")) {
    send({ type: "leave" });
  }
};
$("btn-replay").onclick = toggleReplay;
$("btn-units").onclick = () => {
  const raise = currentRaise();
  const street = raiseValue(); // in the unit still shown
  inBigBlinds = !inBigBlinds;
  remember(UNITS_KEY, inBigBlinds ? "bb" : "chips");
  if (table) render();
  if (raise && Number.isInteger(street)) setRaise(street); // the same amount, in the new unit
};
$("btn-colours").onclick = () => {
  fourColours = !fourColours;
  remember(COLOURS_KEY, fourColours ? "on" : "off");
  renderSettings();
};
$("btn-sound").onclick = () => {
  sound = !sound;
  remember(SOUND_KEY, sound ? "on" : "off");
  if (sound && audio === null) audio = new AudioContext();
  renderSettings();
};
$("raise-slider").oninput = () => {
  const raise = currentRaise();
  if (!raise) return;
  const street = sliderAmount(raise, parseInt($("raise-slider").value, 10));
  setBox(street);
  labelRaise(street);
};
$("raise-to").oninput = () => {
  const raise = currentRaise();
  const street = raiseValue();
  if (raise && Number.isInteger(street)) $("raise-slider").value = sliderNotch(raise, street);
  labelRaise(street);
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
  if (key === "y") {
    toggleReplay();
    return;
  }
  if (key === "f") act("fold");
  else if (key === "c" || key === "k") act("call");
  else if (key === "r") act("raise");
  else if (PRESET_KEYS[key]) preset(PRESET_KEYS[key]);
  else if (/^[0-9]$/.test(key) && currentRaise() && !table.game.limit) {
    event.preventDefault();
    const box = $("raise-to");
    box.value = key;
    box.focus();
    box.dispatchEvent(new Event("input"));
  }
});

setInterval(tick, 250);
connect();
