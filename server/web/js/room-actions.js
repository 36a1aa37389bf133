// @ts-check
/**
 * The panels beside the board that a player acts on: a standing draw offer, what the result
 * means for you (with the replay link), and the buttons (offer a draw, resign, leave).
 *
 * Each panel is rebuilt only when what it shows changes, so a button keeps the keyboard focus.
 */

import { h, keyed } from "./dom.js";

/** @typedef {import("./room-model.js").RoomModel} RoomModel */

/**
 * The panels `offer`, `result` and `actions`; `rerender()` draws the room again (a resign asks for
 * confirmation first), `leave()` leaves the room.
 * @param {{rerender: () => void, leave: () => void}} hooks
 */
export function roomActions({ rerender, leave }) {
  const offer = h("div", { class: "offer" });
  const result = h("div", { class: "result" });
  const actions = h("div", { class: "actions" });
  /** @type {number | null} the game whose resignation waits for "Yes, resign" (never the next game of a series) */
  let confirmResign = null;
  /** @type {number | null} the game that leaving would lose, while "Yes, leave and lose" waits */
  let confirmLeave = null;

  /** @param {RoomModel} model */
  function buildOffer(model) {
    if (model.status !== "playing" || model.drawOffer === null) return;
    if (model.isPlayer && model.drawOffer !== model.seat) {
      offer.append(h("p", { text: `${model.seats[model.drawOffer]} offers a draw. Accept it, or make a move to decline.` }),
        h("button", { type: "button", class: "primary", text: "Accept the draw", onclick: () => model.act("offer_draw").catch(() => {}) }));
    } else {
      offer.append(h("p", { text: model.drawOffer === model.seat && model.isPlayer ? "You offered a draw." : `${model.seats[model.drawOffer]} offers a draw.` }));
    }
  }

  /** @param {RoomModel} model */
  function buildResult(model) {
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
    const event = model.settings && model.settings.tournament; // a tournament's game leads back to its standings
    if (event) links.append(h("a", { href: `#/tournaments/${encodeURIComponent(event)}`, text: "Back to the tournament" }), " ");
    links.append(h("a", { href: "#/lobby", text: "Back to the lobby" }));
    result.append(links);
  }

  /** @param {RoomModel} model */
  function buildActions(model) {
    const playing = model.status === "playing" && model.isPlayer && !model.paused;
    if (playing) {
      const offered = model.drawOffer === model.seat;
      const opponent = model.seat === null ? null : model.seats[1 - model.seat];
      // a house bot never answers an offer (our bots play on): no button that leaves "You offered a draw." for ever
      if (!(typeof opponent === "string" && opponent.startsWith("house-"))) {
        actions.append(h("button", { type: "button", text: "Offer a draw", disabled: offered || model.drawOffer !== null, onclick: () => model.act("offer_draw").catch(() => {}) }));
      }
      if (confirmResign === model.gameNo) {
        actions.append(
          h("button", { type: "button", class: "danger", text: "Yes, resign", onclick: () => { confirmResign = null; model.act("resign").catch(() => {}); } }),
          h("button", { type: "button", text: "Keep playing", onclick: () => { confirmResign = null; rerender(); } }));
      } else {
        actions.append(h("button", { type: "button", text: "Resign…", onclick: () => {
          confirmResign = model.gameNo;
          rerender();
          /** @type {HTMLElement} */ (actions.querySelector(".danger")).focus();
        } }));
      }
    }
    if (model.role) {
      const forfeit = model.isPlayer && model.status === "playing";
      if (forfeit && confirmLeave === model.gameNo) { // leaving loses the game at once: asked first, as resigning is
        actions.append(
          h("button", { type: "button", class: "danger", text: "Yes, leave and lose", onclick: () => { confirmLeave = null; leave(); } }),
          h("button", { type: "button", text: "Stay", onclick: () => { confirmLeave = null; rerender(); } }));
      } else if (forfeit) {
        actions.append(h("button", { type: "button", text: "Leave (loses the game)…", onclick: () => {
          confirmLeave = model.gameNo;
          rerender();
          /** @type {HTMLElement} */ (actions.querySelector(".danger")).focus();
        } }));
      } else {
        actions.append(h("button", { type: "button", text: "Leave the room", onclick: leave }));
      }
    }
  }

  /**
   * Show what `model` says now.
   * @param {RoomModel} model
   */
  function render(model) {
    keyed(offer, `${model.status}|${model.drawOffer}|${model.isPlayer}|${model.seat}`, () => buildOffer(model));
    const shown = model.result && model.status !== "playing";
    keyed(result, shown ? JSON.stringify([model.result, model.seats, model.seat, model.role]) : "", () => buildResult(model));
    if (model.status !== "playing") confirmResign = confirmLeave = null; // a game ended: its questions with it
    keyed(actions, `${model.status}|${model.role}|${model.paused}|${model.drawOffer}|${confirmResign === model.gameNo}|${confirmLeave === model.gameNo}|${model.gameNo}`,
      () => buildActions(model));
  }

  return { offer, result, actions, render };
}
