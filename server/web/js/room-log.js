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

/** @typedef {import("./room-model.js").RoomModel} RoomModel */

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
    const words = model.game && model.game.moveText;
    element.classList.toggle("in-words", Boolean(words));
    for (let i = shown; i < model.moves.length; i++) {
      const notation = model.moves[i];
      element.append(h("li", { "data-seq": i + 1 }, h("span", { class: "n", text: `${i + 1}.` }),
        h("span", { class: "mv", text: words ? words(notation) : notation, title: words ? notation : undefined })));
    }
    shown = model.moves.length;
    if (element.lastElementChild) scrollWithin(element, element.lastElementChild);
  }

  return { element, render };
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
