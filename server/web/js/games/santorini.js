// @ts-check
/**
 * Santorini (no god powers): 5 by 5. Place two workers each; then move a worker one step
 * (at most one level up) and build next to it; moving up onto level 3 wins.
 */

import { fromWire, ranksFromWire } from "../coords.js";
import { at, copyRanks, emptyRanks, firstSeat, neighbours, put, svg } from "./common.js";

const SIZE = 5;
const DOME = 4;
const SEATS = ["blue", "gold"]; // the workers' colours
const GROUND = 94; // where the first block stands (the bottom of a square's drawing)
const SLAB = 20; // the height of one level's block

/** A worker standing at height `base` (the top of its square's stack). */
function worker(seat, base = 76) {
  return `<path d="M38 ${base} Q38 ${base - 22} 50 ${base - 22} Q62 ${base - 22} 62 ${base} Z" class="w${seat}"/>`
    + `<circle cx="50" cy="${base - 29}" r="9" class="w${seat}"/>`;
}

/**
 * A square seen from the front: its levels as blocks stacked on the ground (each a little narrower than the one
 * below, with its number on it), a dome on top, and the worker standing on the highest block.
 */
function drawing(level, seat) {
  let body = "";
  const blocks = Math.min(level, 3);
  for (let i = 0; i < blocks; i++) {
    const top = GROUND - SLAB * (i + 1);
    const inset = 6 + 7 * i;
    body += `<rect x="${inset}" y="${top}" width="${100 - 2 * inset}" height="${SLAB - 1}" rx="2" class="lv lv${i + 1}"/>`;
    body += `<text x="${inset + 4}" y="${top + 14}" class="lvnum">${i + 1}</text>`;
  }
  const base = GROUND - SLAB * blocks;
  if (level === DOME) body += `<path d="M30 ${base} A20 20 0 0 1 70 ${base} Z" class="dome"/>`;
  if (seat !== null) body += worker(seat, base);
  return svg(body);
}

function workersOf(state, seat) {
  const found = [];
  state.workers.forEach((rank, r) => rank.forEach((w, f) => { if (w === seat + 1) found.push([f, r]); }));
  return found;
}

function levelWords(level) {
  return level === DOME ? "a dome" : level ? `level ${level}` : "ground level";
}

/**
 * A Santorini position: `levels[rank][file]` is 0-3, or 4 for a dome; `workers[rank][file]` is 0
 * (none), 1 (a worker of seat 0) or 2 (of seat 1).
 * @typedef {import("./common.js").GameState & {levels: number[][], workers: number[][]}} SantoriniState
 */

/** @type {import("./common.js").Game<SantoriniState>} */
export default {
  id: "santorini",
  title: "Santorini",
  width: SIZE,
  height: SIZE,
  seats: ["Blue", "Gold"],
  swatch: (seat) => svg(worker(seat), "30 32 40 46"),

  initial(options) {
    return { levels: emptyRanks(SIZE, SIZE, 0), workers: emptyRanks(SIZE, SIZE, 0), toMove: firstSeat(options), marks: [] };
  },

  decode(wire, coords) {
    return {
      levels: copyRanks(ranksFromWire(wire.levels, coords)),
      workers: copyRanks(ranksFromWire(wire.workers, coords)),
      toMove: wire.to_move,
      marks: [],
    };
  },

  apply(state, notation) {
    const workers = copyRanks(state.workers);
    const text = notation.trim();
    if (text.includes(" ")) {
      const squares = text.split(/\s+/);
      for (const square of squares) put(workers, square, state.toMove + 1);
      return { ...state, workers, toMove: 1 - state.toMove, marks: squares };
    }
    const [from, rest] = text.split("-");
    const [to, build] = rest.split("/");
    if (at(workers, from) !== state.toMove + 1) throw new Error(`no worker to move on ${from}`);
    put(workers, from, 0);
    put(workers, to, state.toMove + 1);
    const levels = copyRanks(state.levels);
    if (build) put(levels, build, Math.min(at(levels, build) + 1, DOME));
    return { levels, workers, toMove: 1 - state.toMove, marks: build ? [from, to, build] : [from, to] };
  },

  steps(move, coords) {
    const sq = (value) => fromWire(value, coords, SIZE);
    if (move.place) {
      const [a, b] = move.place.map(sq);
      return [[a, b], [b, a]];
    }
    const turn = [sq(move.worker), sq(move.to)];
    return move.build === null || move.build === undefined ? [turn] : [[...turn, sq(move.build)]];
  },

  tokenAt: (state, square) => square,
  targets: (state, token) => [token],

  preview(state, tokens) {
    if (!tokens.length) return state;
    const workers = copyRanks(state.workers);
    if (workersOf(state, state.toMove).length < 2) {
      for (const square of tokens) put(workers, square, state.toMove + 1);
    } else if (tokens.length >= 2) {
      put(workers, tokens[0], 0);
      put(workers, tokens[1], state.toMove + 1);
    }
    return { ...state, workers };
  },

  prompt(state, tokens, say) {
    if (workersOf(state, state.toMove).length < 2) {
      return `pick the square of your ${tokens.length ? "second" : "first"} worker`;
    }
    if (tokens.length === 0) return "pick a worker to move";
    if (tokens.length === 1) return `move the worker on ${say(tokens[0])} one step, at most one level up`;
    return `build next to ${say(tokens[1])}`;
  },

  refuse(state, tokens, square, say) {
    const level = at(state.levels, square);
    const someone = at(state.workers, square);
    if (workersOf(state, state.toMove).length < 2) {
      if (level === DOME) return `${say(square)} has a dome.`;
      return someone ? `${say(square)} is taken by a worker.` : `${say(square)} is not free.`;
    }
    if (tokens.length === 0) {
      if (someone === state.toMove + 1) return `The worker on ${say(square)} cannot move.`;
      return `${say(square)} holds no worker of yours (${SEATS[state.toMove]}).`;
    }
    if (tokens.length === 1) {
      const from = tokens[0];
      if (!neighbours(from, SIZE, SIZE).includes(square)) return `${say(square)} is not next to the worker on ${say(from)}.`;
      if (level === DOME || someone) return `${say(square)} is not free (${someone ? "a worker" : "a dome"}).`;
      return `${say(square)} is more than one level above the worker on ${say(from)}.`;
    }
    if (!neighbours(tokens[1], SIZE, SIZE).includes(square)) return `You can only build next to ${say(tokens[1])}.`;
    return `You cannot build on ${say(square)}: it holds ${level === DOME ? "a dome" : "a worker"}.`;
  },

  cell(state, square) {
    const level = at(state.levels, square);
    const someone = at(state.workers, square);
    const seat = someone ? someone - 1 : null;
    const text = levelWords(level) + (seat === null ? "" : `, ${SEATS[seat]} worker`);
    return { markup: level || seat !== null ? drawing(level, seat) : "", text };
  },

  winLine: () => [],
};
