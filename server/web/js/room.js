// @ts-check
/**
 * The room page (#/room/NAME): the board, both players with their clocks, whose turn it is,
 * the moves in notation, the result and its reason, away notices, resign and draw, and chat.
 *
 * This module lays the page out, follows the room's model (room-model.js) and draws the board;
 * the parts around the board are modules of their own: the player bars (room-players.js), the
 * words (room-status.js), what a player acts on (room-actions.js) and the records of moves,
 * games and chat (room-log.js).
 */

import { BoardView } from "./board.js";
import { showMove } from "./games/common.js";
import { h, replace, setText } from "./dom.js";
import { roomActions } from "./room-actions.js";
import { chat, movesList, seriesList } from "./room-log.js";
import { playerBars } from "./room-players.js";
import { idleWarning, roomMeta, statusText, waitingOnOther } from "./room-status.js";

/** @typedef {import("./app.js").App} App */
/** @typedef {import("./room-model.js").RoomModel} RoomModel */

const TICK_MS = 100;

/**
 * Show the room `name` in `main`, joining it as a spectator unless the player is in it already.
 * Returns the function that takes the page down (and leaves a room only watched).
 * @param {HTMLElement} main
 * @param {string} name
 * @param {App} app
 * @returns {() => void}
 */
export function mountRoom(main, name, app) {
  const { session, store } = app;
  /** @type {(() => void)[]} */
  const stops = [];
  /** @type {RoomModel | null} */
  let model = null;
  /** @type {BoardView | null} */
  let board = null;

  const title = h("h1", { text: name });
  const meta = h("p", { class: "meta" });
  const rulesLink = h("a", { class: "rules-link" });
  const players = playerBars(takeSeat);
  // a refusal or notice shows over the top of the board, where the click that caused it was (never below the fold);
  // clicks go through it to the squares
  const notice = h("p", { class: "notice", role: "alert" });
  const boardSlot = h("div", { class: "board-slot" }, notice);
  const status = h("p", { class: "status", "aria-live": "polite" });
  const idle = h("p", { class: "idle-warning", role: "timer" }); // a countdown: read when asked, not every second
  // each move another player makes, said to a screen reader (the board and the move list change silently)
  const said = h("p", { class: "sr-only said-move", "aria-live": "polite" });
  let saidFor = 0;
  /** the board turned half a turn (Amazons: black's queens start at the top, as the coordinates have it) */
  let flipped = false;
  const flip = h("button", { type: "button", class: "small flip", hidden: true, "aria-pressed": "false", text: "Flip the board",
    onclick: () => { flipped = !flipped; render(); } });
  const panels = roomActions({ rerender: render, leave });
  const moves = movesList();
  const series = seriesList();
  const talk = chat(() => model);

  replace(main,
    h("section", { class: "room" },
      h("header", { class: "room-head" }, title, meta, h("p", { class: "room-tools" }, rulesLink, flip)),
      h("div", { class: "room-body" },
        h("div", { class: "play" }, players.top, boardSlot, players.bottom, status, idle, said),
        h("aside", { class: "side" }, panels.offer, panels.result, panels.actions, series.element,
          h("section", { class: "panel" }, h("h2", { text: "Moves" }), moves.element),
          h("section", { class: "panel" }, h("h2", { text: "Chat" }), talk.log, talk.form)))));

  /** @param {RoomModel} found */
  function attach(found) {
    model = found;
    const onChange = () => render();
    found.addEventListener("change", onChange);
    stops.push(() => found.removeEventListener("change", onChange));
    render();
  }

  function render() {
    if (!model || !model.game) return;
    const { game } = model;
    if (!board) {
      const room = model;
      board = new BoardView(game, model.coords, { onPick: (token) => room.pick(token), onBack: () => room.back() });
      boardSlot.prepend(board.element);
      rulesLink.href = `#/rules/${game.id}`;
      rulesLink.textContent = `Rules of ${game.title}`;
    }
    const mine = model.isPlayer ? model.seat ?? 0 : 0;
    const top = game.topSeat;
    flip.hidden = top === undefined;
    flip.setAttribute("aria-pressed", String(flipped));
    board.setFlipped(flipped);
    setText(meta, roomMeta(model, game));
    // each bar on the side of its player's pieces (Amazons: black's at the top until the board is flipped); in the
    // other games your own bar at the bottom
    players.render(model, game, top === undefined ? mine : flipped ? top : 1 - top);
    tick();

    const picker = model.myTurn ? model.picker : null;
    board.update(model.shownState(), {
      targets: picker ? picker.targets() : new Set(),
      chosen: picker ? picker.chosen : [],
      interactive: Boolean(picker) && !model.sending,
    });
    setText(status, statusText(model, game));
    const count = model.moves.length;
    if (count !== saidFor) {
      saidFor = count;
      const by = model.lastMoveBy;
      const mover = by === null ? null : model.seats[by];
      setText(said, count && mover && by !== model.seat ? `${mover} played ${showMove(game, model.moves[count - 1], model.coords)}` : "");
    }
    status.classList.toggle("waiting-on", waitingOnOther(model)); // a spinner while the other side thinks
    setText(notice, model.notice ? model.notice.text : "");
    notice.className = `notice ${model.notice ? model.notice.kind : ""}`;
    document.title = model.myTurn ? `Your move · ${name} · Plyhall` : `${name} · Plyhall`;
    panels.render(model);
    moves.render(model);
    series.render(model);
    talk.render(model);
  }

  function tick() {
    if (!model) return;
    players.tick(model);
    setText(idle, idleWarning(model, performance.now()));
  }

  /** @param {number} seat */
  async function takeSeat(seat) {
    try {
      // a spectator joining as a player sits down; leaving first closed a room it was the only member of
      await session.request({ type: "join", room: name, seat, role: "player" });
    } catch (error) {
      if (model) model.tell(error.message, "error");
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
        error.code === "no_such_room" ? h("p", {}, "A room closes once its players leave; its games are under ",
          h("a", { href: "#/replay", text: "Replays" }), ".") : null,
        h("p", {}, h("a", { href: "#/lobby", text: "Back to the lobby" }))));
    }
  }

  window.scrollTo(0, 0); // a room opens at its top (the lobby may have been scrolled down to the room's row)
  const timer = setInterval(tick, TICK_MS);
  stops.push(() => clearInterval(timer));
  const onStatus = () => { if (model) model.connectionDown(session.status === "lost"); };
  session.addEventListener("status", onStatus);
  stops.push(() => session.removeEventListener("status", onStatus));
  watch();

  return () => {
    for (const stop of stops) stop();
    document.title = "Plyhall";
    if (model && model.role === "spectator") session.request({ type: "leave", room: name }).catch(() => {});
  };
}
