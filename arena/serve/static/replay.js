// The hand replayer of a match page (arena/serve/pages.py): fetches the match's
// hands from replay.json (the dealer's log, hand by hand, in chunks) and steps
// through one hand's actions; the board shows the cards of the round reached.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const root = $("replayer");
  const match = root.dataset.match;
  const SUITS = { c: "♣", d: "♦", h: "♥", s: "♠" };
  const chunks = new Map(); // chunk start -> hands
  const CHUNK = Number(root.dataset.chunk); // hands a reply holds
  let total = 0;
  let index = 0; // the hand shown, 0-based over the whole match
  let step = 0; // actions shown of that hand
  let hand = null;

  function card(text) {
    const span = document.createElement("span");
    span.className = "card" + ("dh".includes(text[1]) ? " red" : "");
    span.dataset.card = text;
    span.textContent = text[0] + SUITS[text[1]];
    return span;
  }

  async function load(at) {
    const start = Math.floor(at / CHUNK) * CHUNK;
    if (!chunks.has(start)) {
      const reply = await fetch(`/matches/${match}/replay.json?start=${start}`, { credentials: "same-origin" });
      const data = await reply.json();
      total = data.total;
      chunks.set(start, data.hands);
    }
    return chunks.get(start)[at - start] || null;
  }

  async function show(at, atStep) {
    if (total && (at < 0 || at >= total)) return;
    const found = await load(Math.max(0, at));
    $("replay-count").textContent = total ? `of ${total}` : "no finished hand yet";
    if (!found) return;
    index = at;
    hand = found;
    step = Math.max(0, Math.min(atStep, hand.actions.length));
    $("hand-no").value = index + 1;
    render();
  }

  function render() {
    const done = step === hand.actions.length;
    const round = step === 0 ? 0 : done ? hand.board.length - 1 : hand.actions[step - 1].round;
    $("replay-title").textContent = `seating ${hand.seating}, hand ${hand.hand}: step ${step} of ${hand.actions.length}`;
    const board = $("replay-board");
    board.replaceChildren(...(hand.board[round] || []).map(card));
    const seats = $("replay-seats");
    seats.replaceChildren(...hand.names.map((name, p) => {
      const div = document.createElement("div");
      div.className = "seat";
      const label = document.createElement("div");
      label.textContent = name + (done ? ` ${hand.values[p] > 0 ? "+" : ""}${hand.values[p]}` : "");
      div.append(label, ...hand.hole[p].map(card));
      return div;
    }));
    const list = $("replay-actions");
    list.replaceChildren(...hand.actions.map((action, i) => {
      const li = document.createElement("li");
      li.textContent = `round ${action.round + 1}: ${action.name} ${action.text} (pot ${action.pot})`;
      li.className = i < step ? (i === step - 1 ? "current" : "") : "future";
      return li;
    }));
    $("replay-result").textContent = done
      ? hand.names.map((name, p) => `${name} ${hand.values[p] > 0 ? "+" : ""}${hand.values[p]}`).join(", ")
      : "";
  }

  $("step").onclick = () => hand && (step < hand.actions.length ? (step += 1, render()) : show(index + 1, 0));
  $("back").onclick = () => hand && step > 0 && (step -= 1, render());
  $("next-hand").onclick = () => show(index + 1, 0);
  $("prev-hand").onclick = () => show(index - 1, 0);
  $("hand-no").onchange = () => show(Number($("hand-no").value) - 1, 0);
  show(0, 0);
})();
