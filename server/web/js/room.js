/**
 * The room page (#/room/NAME): the board, both players with their clocks, whose turn it is,
 * the moves in notation, the result and its reason, away notices, resign and draw, and chat.
 */

import { BoardView } from "./board.js";
import { drawInto, h, replace, setText } from "./dom.js";
import { describeTimeControl, formatClock, formatPoints, resultText } from "./format.js";

const TICK_MS = 100;

/** " (red)": what a seat's pieces are, when the game gives seats pieces of their own. */
function seatWord(game, seat) {
  return game.seats[seat] ? ` (${game.seats[seat].toLowerCase()})` : "";
}

export function mountRoom(main, name, app) {
  const { session, store } = app;
  const stops = [];
  let model = null;
  let board = null;
  let confirmResign = false;
  let shownChat = 0;
  let shownMoves = -1;

  const title = h("h1", { text: name });
  const meta = h("p", { class: "meta" });
  const bars = [playerBar(), playerBar()];
  const boardSlot = h("div", { class: "board-slot" });
  const status = h("p", { class: "status", "aria-live": "polite" });
  const notice = h("p", { class: "notice", role: "alert" });
  const offer = h("div", { class: "offer" });
  const result = h("div", { class: "result" });
  const actions = h("div", { class: "actions" });
  const movesList = h("ol", { class: "moves", "aria-label": "Moves" });
  const series = h("section", { class: "panel series", hidden: true }, h("h2", { text: "Games in this room" }), h("ol"));
  const chatLog = h("ol", { class: "chat-log", "aria-live": "polite", "aria-label": "Chat" });
  const chatInput = h("input", { type: "text", name: "chat", maxlength: "500", autocomplete: "off", "aria-label": "Chat message", placeholder: "Say something" });
  const chatForm = h("form", { class: "chat-form", onsubmit: sendChat }, chatInput, h("button", { type: "submit", text: "Send" }));

  replace(main,
    h("section", { class: "room" },
      h("header", { class: "room-head" }, title, meta),
      h("div", { class: "room-body" },
        h("div", { class: "play" }, bars[0].element, boardSlot, bars[1].element, status, notice),
        h("aside", { class: "side" }, offer, result, actions, series,
          h("section", { class: "panel" }, h("h2", { text: "Moves" }), movesList),
          h("section", { class: "panel" }, h("h2", { text: "Chat" }), chatLog, chatForm)))));

  function playerBar() {
    const swatch = h("span", { class: "swatch", "aria-hidden": "true" });
    const who = h("span", { class: "who" });
    const away = h("span", { class: "away" });
    const clock = h("span", { class: "clock", role: "timer", "aria-live": "off" });
    const element = h("div", { class: "player" }, swatch, who, away, clock);
    return { element, swatch, who, away, clock, seat: null };
  }

  function attach(found) {
    model = found;
    const onChange = () => render();
    model.addEventListener("change", onChange);
    stops.push(() => model.removeEventListener("change", onChange));
    render();
  }

  function render() {
    if (!model || !model.game) return;
    const { game } = model;
    if (!board) {
      board = new BoardView(game, model.coords, { onPick: (token) => model.pick(token), onBack: () => model.back() });
      boardSlot.replaceChildren(board.element);
    }
    // Your own seat at the bottom; spectators see seat 0 at the bottom.
    const mine = model.isPlayer ? model.seat : 0;
    bars[0].seat = 1 - mine;
    bars[1].seat = mine;
    const settings = model.settings || {};
    const bits = [game.title, describeTimeControl(settings.time_control)];
    if (settings.games > 1) bits.push(`game ${Math.max(1, model.gameNo)} of ${settings.games}`);
    if (settings.illegal_move === "lose") bits.push("an illegal move loses");
    if (!model.isPlayer && model.role) bits.push("you are watching");
    if (model.score && Object.keys(model.score).length) {
      bits.push(`score ${Object.entries(model.score).map(([who, points]) => `${who} ${formatPoints(points)}`).join(", ")}`);
    }
    setText(meta, bits.join(" · "));

    for (const bar of bars) {
      const seatName = model.seats[bar.seat];
      const you = model.isPlayer && bar.seat === model.seat;
      bar.element.classList.toggle("to-move", model.status === "playing" && model.toMove === bar.seat);
      bar.element.dataset.seat = bar.seat;
      drawInto(bar.swatch, game.swatch(bar.seat));
      replace(bar.who, h("b", { text: seatName || "empty seat" }), seatWord(game, bar.seat), you ? " (you)" : "");
      if (!seatName && !model.isPlayer && model.status === "waiting") {
        bar.who.append(" ", h("button", { type: "button", class: "small", text: "Take this seat", onclick: () => takeSeat(bar.seat) }));
      }
    }
    tick();

    const picking = model.myTurn && model.picker;
    board.update(model.shownState(), {
      targets: picking ? model.picker.targets() : new Set(),
      chosen: picking ? model.picker.chosen : [],
      interactive: Boolean(picking) && !model.sending,
    });
    setText(status, statusText());
    setText(notice, model.notice ? model.notice.text : "");
    notice.className = `notice ${model.notice ? model.notice.kind : ""}`;
    document.title = model.myTurn ? `Your move · ${name} · Plyhall` : `${name} · Plyhall`;
    renderOffer();
    renderResult();
    renderActions();
    renderMoves();
    renderSeries();
    renderChat();
  }

  function renderSeries() {
    series.hidden = !(model.settings && model.settings.games > 1 && model.finished.length);
    keyed(series.lastChild, String(model.finished.length), () => {
      for (const game of model.finished) {
        series.lastChild.append(h("li", { value: game.gameNo }, resultText(game.result, game.players), " ",
          game.result.record ? h("a", { href: `#/replay/${encodeURIComponent(game.result.record)}`, text: "replay" }) : null));
      }
    });
  }

  function statusText() {
    const { game } = model;
    if (model.status === "waiting") {
      if (model.expecting && !model.seats[1]) return `Waiting for the house bot (${model.expecting}) to sit down…`;
      if (model.isPlayer) return "Waiting for an opponent to take the other seat.";
      return "Waiting for players.";
    }
    if (model.status === "finished" || model.toMove === null) {
      return model.result ? resultText(model.result, model.seats) : "The game is over.";
    }
    if (model.paused) return "Paused: the game goes on when both players are back.";
    if (model.myTurn) {
      if (model.sending) return "Sending your move…";
      if (!model.picker) return "Your move: getting the legal moves…";
      const say = (square) => model.say(square);
      say.coords = model.coords;
      return `Your move: ${game.prompt(model.shownState(), model.picker.chosen, say)}`;
    }
    return `${model.seats[model.toMove] || `Seat ${model.toMove}`}${seatWord(game, model.toMove)} to move.`;
  }

  function tick() {
    if (!model) return;
    const clocks = model.clockNow();
    const now = performance.now();
    for (const bar of bars) {
      const left = clocks ? clocks[bar.seat] : null;
      setText(bar.clock, clocks ? formatClock(left) : "");
      bar.clock.classList.toggle("running", Boolean(model.clocks && model.clocks.running === bar.seat && !model.paused));
      bar.clock.classList.toggle("low", clocks !== null && left < 10);
      const away = model.away.get(bar.seat);
      setText(bar.away, away ? `lost the connection: ${Math.max(0, Math.ceil((away.until - now) / 1000))} s to come back` : "");
    }
  }

  /** Rebuild `element` only when `key` changed, so a button keeps the keyboard focus while others move. */
  function keyed(element, key, build) {
    if (element.dataset.key === key) return;
    element.dataset.key = key;
    element.replaceChildren();
    build();
  }

  function renderOffer() {
    keyed(offer, `${model.status}|${model.drawOffer}|${model.isPlayer}|${model.seat}`, buildOffer);
  }

  function buildOffer() {
    if (model.status !== "playing" || model.drawOffer === null) return;
    if (model.isPlayer && model.drawOffer !== model.seat) {
      offer.append(h("p", { text: `${model.seats[model.drawOffer]} offers a draw. Accept it, or make a move to decline.` }),
        h("button", { type: "button", class: "primary", text: "Accept the draw", onclick: () => model.act("offer_draw").catch(() => {}) }));
    } else {
      offer.append(h("p", { text: model.drawOffer === model.seat && model.isPlayer ? "You offered a draw." : `${model.seats[model.drawOffer]} offers a draw.` }));
    }
  }

  function renderResult() {
    const shown = model.result && model.status !== "playing";
    keyed(result, shown ? JSON.stringify([model.result, model.seats, model.seat, model.role]) : "", buildResult);
  }

  function buildResult() {
    if (!model.result || model.status === "playing") return;
    // the result itself is in the status line under the board; this panel says what it means for you
    const { winner } = model.result;
    let verdict = "The game is over.";
    if (model.isPlayer && winner !== null && winner !== undefined) verdict = winner === model.seat ? "You won." : "You lost.";
    else if (model.isPlayer && model.result.status !== "aborted") verdict = "A draw.";
    result.append(h("p", { class: "verdict" }, h("b", { text: verdict })));
    if (model.result.nextGame) result.append(h("p", { text: "The next game of the series starts when both players are seated." }));
    const links = h("p", { class: "links" });
    if (model.result.record) links.append(h("a", { href: `#/replay/${encodeURIComponent(model.result.record)}`, text: "Replay this game" }), " ");
    links.append(h("a", { href: "#/lobby", text: "Back to the lobby" }));
    result.append(links);
  }

  function renderActions() {
    keyed(actions, `${model.status}|${model.role}|${model.paused}|${model.drawOffer}|${confirmResign}`, buildActions);
  }

  function buildActions() {
    const playing = model.status === "playing" && model.isPlayer && !model.paused;
    if (playing) {
      const offered = model.drawOffer === model.seat;
      actions.append(h("button", { type: "button", text: "Offer a draw", disabled: offered || model.drawOffer !== null, onclick: () => model.act("offer_draw").catch(() => {}) }));
      if (confirmResign) {
        actions.append(
          h("button", { type: "button", class: "danger", text: "Yes, resign", onclick: () => { confirmResign = false; model.act("resign").catch(() => {}); } }),
          h("button", { type: "button", text: "Keep playing", onclick: () => { confirmResign = false; render(); } }));
      } else {
        actions.append(h("button", { type: "button", text: "Resign…", onclick: () => { confirmResign = true; render(); actions.querySelector(".danger").focus(); } }));
      }
    }
    if (model.role) {
      const forfeit = model.isPlayer && model.status === "playing";
      actions.append(h("button", { type: "button", text: forfeit ? "Leave (loses the game)" : "Leave the room", onclick: leave }));
    }
  }

  function renderMoves() {
    if (shownMoves > model.moves.length || (shownMoves >= 0 && movesList.children.length !== shownMoves)) {
      movesList.replaceChildren();
      shownMoves = 0;
    }
    if (shownMoves < 0) shownMoves = 0;
    for (let i = shownMoves; i < model.moves.length; i++) {
      movesList.append(h("li", { "data-seq": i + 1 }, h("span", { class: "n", text: `${i + 1}.` }), h("span", { class: "mv", text: model.moves[i] })));
    }
    shownMoves = model.moves.length;
    if (movesList.lastChild) movesList.lastChild.scrollIntoView({ block: "nearest" });
  }

  function renderChat() {
    if (model.chat.length < shownChat) {
      chatLog.replaceChildren();
      shownChat = 0;
    }
    for (let i = shownChat; i < model.chat.length; i++) {
      const line = model.chat[i];
      chatLog.append(h("li", {}, h("b", { text: line.from }), ": ", line.text));
    }
    if (model.chat.length > shownChat && chatLog.lastChild) chatLog.lastChild.scrollIntoView({ block: "nearest" });
    shownChat = model.chat.length;
    chatInput.disabled = !model.role;
  }

  function sendChat(event) {
    event.preventDefault();
    const text = chatInput.value.trim();
    if (!text || !model) return;
    model.act("chat", { text }).then(() => { chatInput.value = ""; }).catch(() => {});
  }

  async function takeSeat(seat) {
    try {
      await session.request({ type: "leave", room: name });
      await session.request({ type: "join", room: name, seat, role: "player" });
    } catch (error) {
      model.tell(error.message, "error");
    }
  }

  async function leave() {
    try {
      await session.request({ type: "leave", room: name });
    } catch {
      // already gone
    }
    app.navigate("#/lobby");
  }

  async function watch() {
    const found = store.rooms.get(name);
    if (found && found.role) {
      attach(found);
      return;
    }
    if (session.me && session.me.rooms.includes(name)) {
      attach(store.get(name)); // its joined and game_start are on their way
      return;
    }
    try {
      await session.request({ type: "join", room: name, role: "spectator" });
      attach(store.get(name));
    } catch (error) {
      replace(main, h("section", { class: "room missing" }, h("h1", { text: name }),
        h("p", { class: "notice error", text: error.code === "no_such_room" ? `There is no room named ${name} (any more).` : error.message }),
        h("p", {}, h("a", { href: "#/lobby", text: "Back to the lobby" }))));
    }
  }

  const timer = setInterval(tick, TICK_MS);
  stops.push(() => clearInterval(timer));
  watch();

  return () => {
    for (const stop of stops) stop();
    document.title = "Plyhall";
    if (model && model.role === "spectator") session.request({ type: "leave", room: name }).catch(() => {});
  };
}
