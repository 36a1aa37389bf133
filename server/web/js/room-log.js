// @ts-check
/**
 * What a room keeps a record of, beside the board: the moves in notation, the games of a series
 * that ended while the page was open (with their replays), and the chat with its input.
 *
 * The moves and chat lines are appended as they come, not redrawn, so a screen reader reads
 * each new line once and the lists keep their scroll position.
 */

import { h, keyed, scrollWithin } from "./dom.js";
import { resultText } from "./format.js";
import { showMove } from "./games/common.js";

/** @typedef {import("./room-model.js").RoomModel} RoomModel */

/**
 * One move of a list: its number, and the move in the player's convention (or in words), with its notation as the
 * title when that reads differently.
 * @param {import("./games/common.js").AnyGame} game
 * @param {string} notation
 * @param {import("./coords.js").Coords} coords
 * @param {number} seq
 * @param {(() => void) | null} onclick  a replay's list: its moves are buttons that go there
 */
export function moveItem(game, notation, coords, seq, onclick = null) {
  const text = showMove(game, notation, coords);
  const props = { class: onclick ? "move mv" : "mv", text, title: text === notation ? undefined : notation };
  const mv = onclick ? h("button", { type: "button", "data-seq": seq, onclick, ...props }) : h("span", props);
  return h("li", { "data-seq": seq }, h("span", { class: "n", text: `${seq}.` }), mv);
}

/**
 * Make a scrolling move list hold whole rows and take one column when a move is too long for two (Amazons'
 * "g10-d7/c7?!", cosc322 squares): scrolled to its end, its top row is then never cut in half.
 * @param {HTMLElement} list
 */
export function fitRows(list) {
  const items = /** @type {HTMLElement[]} */ ([...list.children]);
  list.classList.remove("one-column");
  if (!items.length) return;
  if (list.scrollWidth > list.clientWidth + 1) list.classList.add("one-column");
  const style = getComputedStyle(list);
  if (!list.dataset.maxHeight) list.dataset.maxHeight = style.maxHeight; // the style sheet's, before ours
  list.style.maxHeight = "";
  const limit = parseFloat(getComputedStyle(list).maxHeight);
  const gap = parseFloat(style.rowGap) || 0;
  const row = items[0].getBoundingClientRect().height + gap;
  if (!(limit > 0) || !(row > 0)) return;
  const rows = Math.max(1, Math.floor((limit + gap) / row));
  list.style.maxHeight = `${rows * row - gap + parseFloat(style.paddingTop) + parseFloat(style.paddingBottom)}px`;
}

/** The list of moves (`element`). */
export function movesList() {
  const element = h("ol", { class: "moves", "aria-label": "Moves" });
  let shown = -1;

  /** @param {RoomModel} model */
  function render(model) {
    if (shown > model.moves.length || (shown >= 0 && element.children.length !== shown)) {
      element.replaceChildren();
      shown = 0;
    }
    if (shown < 0) shown = 0;
    const game = model.game;
    if (!game) return;
    element.classList.toggle("in-words", Boolean(game.moveText));
    for (let i = shown; i < model.moves.length; i++) element.append(moveItem(game, model.moves[i], model.coords, i + 1));
    if (model.moves.length !== shown) fitRows(element);
    shown = model.moves.length;
    if (element.lastElementChild) scrollWithin(element, element.lastElementChild);
  }

  refitOnResize(element, () => element.lastElementChild);
  return { element, render };
}

/**
 * Keep a move list laid out as the window changes size (a phone turned, a window made wider): its rows fitted again
 * and `item()` (the last move, or a replay's current one) scrolled into view, at the next frame so that the fitting
 * does not resize the list within this one. Returns what stops it.
 * @param {HTMLElement} list
 * @param {() => Element | null} item
 */
export function refitOnResize(list, item) {
  const observer = new ResizeObserver(() => requestAnimationFrame(() => {
    const shown = item();
    if (!shown || !list.isConnected) return;
    fitRows(list);
    scrollWithin(list, shown);
  }));
  observer.observe(list);
  return () => observer.disconnect();
}

/** The games of a series that ended while the page was open (`element`, shown once there are any). */
export function seriesList() {
  const games = h("ol");
  const element = h("section", { class: "panel series", hidden: true }, h("h2", { text: "Games in this room" }), games);

  /** @param {RoomModel} model */
  function render(model) {
    element.hidden = !(model.settings && model.settings.games > 1 && model.finished.length);
    keyed(games, String(model.finished.length), () => {
      for (const game of model.finished) {
        games.append(h("li", { value: game.gameNo }, resultText(game.result, game.players), " ",
          game.result.record ? h("a", { href: `#/replay/${encodeURIComponent(game.result.record)}`, text: "replay" }) : null));
      }
    });
  }

  return { element, render };
}

/**
 * The chat (`log`) and its input (`form`); `current()` is the room's model once the page follows one.
 * @param {() => RoomModel | null} current
 */
export function chat(current) {
  const log = h("ol", { class: "chat-log", "aria-live": "polite", "aria-label": "Chat" });
  const input = h("input", { type: "text", name: "chat", maxlength: "500", autocomplete: "off", "aria-label": "Chat message", placeholder: "Say something" });
  // a refused line (too long, too fast) is said here, beside the chat box, not under the board
  const note = h("p", { class: "chat-notice", role: "alert" });
  const form = h("form", { class: "chat-form", onsubmit: send }, input, h("button", { type: "submit", text: "Send" }), note);
  let shown = 0;
  input.addEventListener("input", () => { note.textContent = ""; });

  /** @param {Event} event */
  function send(event) {
    event.preventDefault();
    const text = input.value.trim();
    const model = current();
    if (!text || !model) return;
    model.session.request({ type: "chat", room: model.name, text }).then(() => {
      input.value = "";
      note.textContent = "";
    }).catch((error) => { note.textContent = error.message; });
  }

  /** @param {RoomModel} model */
  function render(model) {
    if (model.chat.length < shown) {
      log.replaceChildren();
      shown = 0;
    }
    for (let i = shown; i < model.chat.length; i++) {
      const line = model.chat[i];
      log.append(h("li", {}, h("b", { text: line.from }), ": ", line.text));
    }
    if (model.chat.length > shown && log.lastElementChild) scrollWithin(log, log.lastElementChild);
    shown = model.chat.length;
    input.disabled = !model.role;
  }

  return { log, form, render };
}
