// @ts-check
/** Magnetic Cave: 8 by 8; a brick goes at either end of a row or right beside another brick; five in a row wins. */

import { fromWire, ranksFromWire } from "../coords.js";
import { at, copyRanks, emptyRanks, findLine, firstSeat, put, svg } from "./common.js";

const SIZE = 8;
const SEATS = ["black", "white"];

function brick(seat) {
  return svg(`<rect x="9" y="17" width="82" height="66" rx="9" class="b${seat}"/>`
    + `<rect x="19" y="27" width="62" height="46" rx="5" class="b${seat} rim"/>`);
}

/**
 * A Magnetic Cave position: `cells[rank][file]` is 0 (empty), 1 (a black brick) or 2 (a white brick).
 * @typedef {import("./common.js").GameState & {cells: number[][]}} CaveState
 */

/** @type {import("./common.js").Game<CaveState>} */
export default {
  id: "magnetic-cave",
  title: "Magnetic Cave",
  width: SIZE,
  height: SIZE,
  seats: ["Black", "White"],
  swatch: (seat) => brick(seat),

  initial(options) {
    return { cells: emptyRanks(SIZE, SIZE, 0), toMove: firstSeat(options), marks: [] };
  },

  decode(wire, coords) {
    return { cells: copyRanks(ranksFromWire(wire.board, coords)), toMove: wire.to_move, marks: [] };
  },

  apply(state, notation) {
    const square = notation.trim();
    if (at(state.cells, square) !== 0) throw new Error(`${square} is taken`);
    const cells = copyRanks(state.cells);
    put(cells, square, state.toMove + 1);
    return { cells, toMove: 1 - state.toMove, marks: [square] };
  },

  steps(move, coords) {
    const square = move !== null && typeof move === "object" && !Array.isArray(move) ? move.square : move;
    return [[fromWire(square, coords, SIZE)]];
  },

  tokenAt: (state, square) => square,
  targets: (state, token) => [token],
  preview: (state) => state,

  prompt: () => "place a brick on a highlighted square, at either end of a row's bricks",

  refuse(state, tokens, square, say) {
    if (at(state.cells, square)) return `${say(square)} is taken.`;
    return `${say(square)} is not open: a brick goes in the first or last column, or right beside another brick.`;
  },

  cell(state, square) {
    const stone = at(state.cells, square);
    return stone ? { markup: brick(stone - 1), text: `${SEATS[stone - 1]} brick` } : { markup: "", text: "empty" };
  },

  winLine: (state) => findLine(state.cells, 5),
};
