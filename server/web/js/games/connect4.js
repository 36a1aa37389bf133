// @ts-check
/** Connect Four: 7 columns of 6, discs drop to the lowest empty square; four in a row wins. */

import { parseName, ranksFromWire, squareName } from "../coords.js";
import { at, copyRanks, disc, emptyRanks, findLine, firstSeat, svg } from "./common.js";

const WIDTH = 7;
const HEIGHT = 6;
const SEATS = ["red", "yellow"];
const HOLE = svg('<circle cx="50" cy="50" r="40" class="hole"/>');

/** The rank (from 0) where a disc dropped in file `f` lands, or -1 when the column is full. */
function landing(cells, f) {
  for (let r = 0; r < HEIGHT; r++) if (!cells[r][f]) return r;
  return -1;
}

/** A column as the player's convention numbers it (1-7, or 0-6 in matrix). */
function columnLabel(f, coords) {
  return String(coords === "matrix" ? f : f + 1);
}

/**
 * A Connect Four position: `cells[rank][file]` is 0 (empty), 1 (seat 0's disc) or 2 (seat 1's).
 * @typedef {import("./common.js").GameState & {cells: number[][]}} C4State
 */

/** @type {import("./common.js").Game<C4State>} */
export default {
  id: "connect4",
  title: "Connect Four",
  width: WIDTH,
  height: HEIGHT,
  seats: ["Red", "Yellow"],
  swatch: (seat) => disc(`d${seat}`),

  /** Columns are numbered as moves are (1-7, matrix 0-6); rows need no labels. */
  edges(coords) {
    return { files: Array.from({ length: WIDTH }, (_, f) => columnLabel(f, coords)), ranks: null };
  },

  /** A move is its column, numbered as the board's edge numbers it. */
  moveIn(notation, coords) {
    const column = Number(notation);
    return Number.isInteger(column) && column >= 1 && column <= WIDTH ? columnLabel(column - 1, coords) : notation;
  },

  spoken(square, coords) {
    const { f, r } = parseName(square);
    return `column ${columnLabel(f, coords)}, row ${r + 1} from the bottom`;
  },

  initial(options) {
    return { cells: emptyRanks(WIDTH, HEIGHT, 0), toMove: firstSeat(options), marks: [] };
  },

  decode(wire, coords) {
    return { cells: copyRanks(ranksFromWire(wire.board, coords)), toMove: wire.to_move, marks: [] };
  },

  apply(state, notation) {
    const f = Number(notation) - 1;
    const r = f >= 0 && f < WIDTH ? landing(state.cells, f) : -1;
    if (r < 0) throw new Error(`cannot drop in column ${notation}`);
    const cells = copyRanks(state.cells);
    cells[r][f] = state.toMove + 1;
    const square = squareName(f, r);
    return { cells, toMove: 1 - state.toMove, marks: [square], dropped: square };
  },

  steps(move, coords) {
    const column = typeof move === "object" ? move.column : Number(move);
    return [[`col:${coords === "matrix" ? column : column - 1}`]];
  },

  tokenAt(state, square) {
    return `col:${parseName(square).f}`;
  },

  targets(state, token) {
    const f = Number(token.slice(4));
    const r = landing(state.cells, f);
    return r < 0 ? [] : [squareName(f, r)];
  },

  preview: (state) => state,

  prompt: () => "drop a disc in a column",

  refuse(state, tokens, token, say) {
    const f = Number(token.slice(4));
    return landing(state.cells, f) < 0 ? `Column ${columnLabel(f, say.coords)} is full.` : "That column is not open now.";
  },

  cell(state, square) {
    const stone = at(state.cells, square);
    if (!stone) return { markup: HOLE, text: "empty", empty: true };
    return { markup: disc(`d${stone - 1}`), text: `${SEATS[stone - 1]} disc` };
  },

  winLine: (state) => findLine(state.cells, 4),
};
