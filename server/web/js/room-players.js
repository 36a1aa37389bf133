// @ts-check
/**
 * The two player bars of a room page, above and below the board: who sits in each seat (your
 * own at the bottom), their pieces, whose turn it is, away notices and the clocks.
 */

import { drawInto, h, replace, setText } from "./dom.js";
import { formatClock, lowClock } from "./format.js";
import { seatWord } from "./room-status.js";

/** @typedef {import("./games/common.js").AnyGame} AnyGame */
/** @typedef {import("./room-model.js").RoomModel} RoomModel */

/** One bar: its element, the parts that change, and the seat it shows (set by the first render). */
function playerBar() {
  const swatch = h("span", { class: "swatch", "aria-hidden": "true" });
  const who = h("span", { class: "who" });
  const away = h("span", { class: "away" });
  const clock = h("span", { class: "clock", role: "timer", "aria-live": "off" });
  const element = h("div", { class: "player" }, swatch, who, away, clock);
  return { element, swatch, who, away, clock, seat: /** @type {number | null} */ (null) };
}

/**
 * The bars (`top`, `bottom`); `onTakeSeat(seat)` when a spectator takes an empty seat of a waiting room.
 * @param {(seat: number) => void} onTakeSeat
 */
export function playerBars(onTakeSeat) {
  const bars = [playerBar(), playerBar()];

  /**
   * Who sits where, and whose turn it is.
   * @param {RoomModel} model
   * @param {AnyGame} game the room's game
   * @param {number} mine the seat whose bar goes at the bottom (the side of the board its pieces are on)
   */
  function render(model, game, mine) {
    for (const [i, bar] of bars.entries()) {
      const seat = i === 0 ? 1 - mine : mine;
      bar.seat = seat;
      const seatName = model.seats[seat];
      const you = model.isPlayer && seat === model.seat;
      bar.element.classList.toggle("to-move", model.status === "playing" && model.toMove === seat);
      bar.element.dataset.seat = String(seat);
      drawInto(bar.swatch, game.swatch(seat));
      // after a game, a player who has left is still named: the finished game was theirs
      const left = !seatName && model.status === "finished" && model.lastPlayers ? model.lastPlayers[seat] : null;
      replace(bar.who, h("b", { text: seatName || left || "empty seat" }), seatWord(game, seat), you ? " (you)" : "",
        left ? h("span", { class: "muted", text: " · has left" }) : null); // (beside "(yellow)": no second brackets)
      if (!seatName && !model.isPlayer && model.status === "waiting") {
        bar.who.append(" ", h("button", { type: "button", class: "small", text: "Take this seat", onclick: () => onTakeSeat(seat) }));
      }
    }
  }

  /**
   * The clocks as they run down, and how long an away player has to come back.
   * @param {RoomModel} model
   */
  function tick(model) {
    const clocks = model.clockNow();
    const now = performance.now();
    for (const bar of bars) {
      const seat = bar.seat;
      if (seat === null) continue; // not drawn yet
      const left = clocks ? clocks[seat] : null;
      setText(bar.clock, clocks ? formatClock(left) : "");
      bar.clock.classList.toggle("running", Boolean(model.clocks && model.clocks.running === seat && !model.paused));
      bar.clock.classList.toggle("low", clocks !== null && lowClock(clocks[seat]));
      const away = model.away.get(seat);
      // (once the time to come back is over, the seat is given up: nothing is left to count down)
      setText(bar.away, away && away.until > now ? `lost the connection: ${Math.ceil((away.until - now) / 1000)} s to come back` : "");
    }
  }

  return { top: bars[0].element, bottom: bars[1].element, render, tick };
}
