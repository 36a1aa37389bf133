// @ts-check
/** The words of a room page: the line under its name, and the status line under the board. */

import { describeTimeControl, formatPoints, resultText } from "./format.js";

/** @typedef {import("./games/common.js").AnyGame} AnyGame */
/** @typedef {import("./room-model.js").RoomModel} RoomModel */

/**
 * " (red)": what a seat's pieces are, when the game gives seats pieces of their own.
 * @param {AnyGame} game
 * @param {number} seat
 */
export function seatWord(game, seat) {
  return game.seats[seat] ? ` (${game.seats[seat].toLowerCase()})` : "";
}

/**
 * The line under the room's name: the game, the time control, the series, the rules that differ, the score.
 * @param {RoomModel} model
 * @param {AnyGame} game the room's game
 */
export function roomMeta(model, game) {
  const settings = model.settings || {};
  const bits = [game.title, describeTimeControl(settings.time_control)];
  if (settings.games > 1) bits.push(`game ${Math.max(1, model.gameNo)} of ${settings.games}`);
  if (settings.illegal_move === "lose") bits.push("an illegal move loses");
  const perMove = settings.time_control && settings.time_control.per_move;
  if (model.idle !== null && model.status === "playing" && !(perMove && perMove <= model.idle)) {
    bits.push(`a move left ${spanText(model.idle)} loses`); // (unless the clock runs out first)
  }
  if (!model.isPlayer && model.role) bits.push("you are watching");
  if (model.score && Object.keys(model.score).length) {
    bits.push(`score ${Object.entries(model.score).map(([who, points]) => `${who} ${formatPoints(points)}`).join(", ")}`);
  }
  return bits.join(" · ");
}

/** "3 min", "90 s": a span of seconds in words. */
function spanText(seconds) {
  return seconds >= 60 && seconds % 60 === 0 ? `${seconds / 60} min` : `${Math.round(seconds)} s`;
}

/** The seconds before a warning that your move is about to lose the game on the idle limit. */
const IDLE_WARNING = 60;

/**
 * A warning while your move has waited long enough to near the idle limit of a game against a house bot, which would
 * lose you the game: "Move within 42 s, or you lose the game." Empty otherwise.
 * @param {RoomModel} model
 * @param {number} now performance.now()
 * @returns {string}
 */
export function idleWarning(model, now) {
  if (model.idleUntil === null || model.idle === null || !model.myTurn || model.paused) return "";
  const left = Math.max(0, Math.ceil((model.idleUntil - now) / 1000));
  const clocks = model.clockNow();
  // (a clock that runs out first says so itself, in red)
  if (left > IDLE_WARNING || (clocks && model.seat !== null && clocks[model.seat] <= left)) return "";
  return `Move within ${left} s, or you lose the game.`; // (the line under the room's name says why)
}

/**
 * The name holding the other seat of a room that has not started, while a player waits for it to sit down (a house
 * bot holds its seat from the moment it is asked for, 2 to 4 s before its process connects); null otherwise.
 * @param {RoomModel} model
 * @returns {string | null}
 */
export function waitingFor(model) {
  if (!model.isPlayer || model.status !== "waiting" || model.seat === null) return null;
  return model.seats[1 - model.seat] || null;
}

/**
 * True while a player waits for the other side: its move (a bot thinking), or a house bot taking its seat.
 * @param {RoomModel} model
 */
export function waitingOnOther(model) {
  if (!model.isPlayer || model.paused) return false;
  if (model.status === "waiting") return Boolean(model.expecting || waitingFor(model));
  return model.status === "playing" && model.toMove !== null && model.toMove !== model.seat;
}

/**
 * The status line under the board: who is to move, what to pick next, or how the game ended.
 * @param {RoomModel} model
 * @param {AnyGame} game the room's game
 */
export function statusText(model, game) {
  if (model.status === "waiting") {
    const coming = waitingFor(model);
    if (coming) return `Waiting for ${coming} to sit down…`;
    if (model.expecting) return `Waiting for the house bot (${model.expecting}) to sit down…`;
    if (model.isPlayer) return "Waiting for an opponent to take the other seat.";
    return "Waiting for players.";
  }
  if (model.status === "finished" || model.toMove === null) {
    return model.result ? resultText(model.result, model.lastPlayers || model.seats) : "The game is over.";
  }
  if (model.paused) return "Paused: the game goes on when both players are back.";
  if (model.myTurn) {
    if (model.sending) return "Sending your move…";
    if (!model.picker) return "Your move: getting the legal moves…";
    return `Your move: ${game.prompt(model.shownState(), model.picker.chosen, model.sayer())}.`;
  }
  const mover = model.seats[model.toMove] || `Seat ${model.toMove}`;
  if (model.isPlayer && /^house-/.test(mover)) return `${mover}${seatWord(game, model.toMove)} is thinking…`;
  return `${mover}${seatWord(game, model.toMove)} to move.`;
}
