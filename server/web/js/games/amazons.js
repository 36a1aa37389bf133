// @ts-check
/** Game of the Amazons: 10 by 10; move a queen like a chess queen, then shoot an arrow from where it lands. */

import { fromWire, ranksFromWire } from "../coords.js";
import { at, copyRanks, crown, emptyRanks, firstSeat, put, svg } from "./common.js";

const SIZE = 10;
const EMPTY = 0;
const ARROW = 3;
const NAMES = ["an empty square", "a black queen", "a white queen", "an arrow"];
const START = [["a7", "d10", "g10", "j7"], ["a4", "d1", "g1", "j4"]];
const ARROW_MARK = svg('<rect x="14" y="14" width="72" height="72" rx="10" class="arrow"/>'
  + '<path d="M32 32 L68 68 M68 32 L32 68" class="arrow-x"/>');

function moveQueen(cells, from, to) {
  const next = copyRanks(cells);
  put(next, to, at(cells, from));
  put(next, from, EMPTY);
  return next;
}

/**
 * An Amazons position: `cells[rank][file]` is 0 (empty), 1 (a black queen), 2 (a white queen) or 3 (an arrow).
 * @typedef {import("./common.js").GameState & {cells: number[][]}} AmazonsState
 */

/** @type {import("./common.js").Game<AmazonsState>} */
export default {
  id: "amazons",
  title: "Amazons",
  width: SIZE,
  height: SIZE,
  seats: ["Black", "White"],
  topSeat: 0, // black's queens start on ranks 7 and 10
  swatch: (seat) => crown(`q${seat}`),

  initial(options) {
    const cells = emptyRanks(SIZE, SIZE, EMPTY);
    START.forEach((squares, seat) => squares.forEach((square) => put(cells, square, seat + 1)));
    return { cells, toMove: firstSeat(options), marks: [] };
  },

  decode(wire, coords) {
    return { cells: copyRanks(ranksFromWire(wire.board, coords)), toMove: wire.to_move, marks: [] };
  },

  apply(state, notation) {
    const [queen, rest] = notation.split("-");
    const [to, arrow] = rest.split("/");
    if (at(state.cells, queen) !== state.toMove + 1) throw new Error(`no queen to move on ${queen}`);
    const cells = moveQueen(state.cells, queen, to);
    put(cells, arrow, ARROW);
    return { cells, toMove: 1 - state.toMove, marks: [queen, to, arrow] };
  },

  steps(move, coords) {
    return [[move.queen, move.to, move.arrow].map((square) => fromWire(square, coords, SIZE))];
  },

  tokenAt: (state, square) => square,
  targets: (state, token) => [token],

  preview(state, tokens) {
    return tokens.length < 2 ? state : { ...state, cells: moveQueen(state.cells, tokens[0], tokens[1]) };
  },

  prompt(state, tokens, say) {
    if (tokens.length === 0) return "pick one of your queens";
    if (tokens.length === 1) return `pick where the queen on ${say(tokens[0])} goes`;
    return `shoot an arrow from ${say(tokens[1])}`;
  },

  refuse(state, tokens, square, say) {
    const here = at(state.cells, square);
    if (tokens.length === 0) {
      if (here === state.toMove + 1) return `The queen on ${say(square)} has no move.`;
      const what = here ? `holds ${NAMES[here]}` : "is empty"; // never "holds an empty square"
      return `${say(square)} ${what}: pick one of your own queens (${this.seats[state.toMove].toLowerCase()}).`;
    }
    if (tokens.length === 1) {
      return `The queen on ${say(tokens[0])} cannot go to ${say(square)}: a queen moves in a straight line over empty squares.`;
    }
    return `An arrow from ${say(tokens[1])} cannot land on ${say(square)}: it flies in a straight line over empty squares.`;
  },

  cell(state, square) {
    const here = at(state.cells, square);
    if (here === ARROW) return { markup: ARROW_MARK, text: "an arrow" };
    if (here) return { markup: crown(`q${here - 1}`), text: NAMES[here] };
    return { markup: "", text: "empty" };
  },

  winLine: () => [],
};
