// @ts-check
/**
 * Quarto: 4 by 4, 16 pieces, each four attributes written as binary digits (colour, shape,
 * height, hollow). Place the piece you were given, then choose the piece your opponent places.
 * Four in a line sharing an attribute wins.
 *
 * Drawn as: digit 1 colour (1 dark, 0 light), digit 2 shape (1 round, 0 square), digit 3
 * height (1 tall: larger, with a deeper side; 0 short), digit 4 (1 hollow: a hole on top, 0 solid).
 */

import { fromWire, ranksFromWire, squareName } from "../coords.js";
import { at, copyRanks, emptyRanks, firstSeat, put, svg } from "./common.js";

const SIZE = 4;
const CODES = Array.from({ length: 16 }, (_, n) => n.toString(2).padStart(4, "0"));
export const ATTRIBUTES = [["light", "dark"], ["square", "round"], ["short", "tall"], ["solid", "hollow"]];

/** A piece's attributes in words: "dark round tall hollow". */
export function describePiece(code) {
  return [...code].map((digit, i) => ATTRIBUTES[i][Number(digit)]).join(" ");
}

function shape(round, cx, cy, half, cls) {
  return round
    ? `<circle cx="${cx}" cy="${cy}" r="${half}" class="${cls}"/>`
    : `<rect x="${cx - half}" y="${cy - half}" width="${2 * half}" height="${2 * half}" rx="4" class="${cls}"/>`;
}

/**
 * A move in words, the piece said as people say it: "c2, gives dark round tall hollow" for "c2 1111",
 * "gives light square short solid" for the opening hand-over "0000", just "c2" for a last placing; "[2,3], gives …" where
 * the square is written as a row and a column.
 * @param {string} notation
 */
export function moveText(notation) {
  const [first, second] = notation.split(" ");
  if (/^[01]{4}$/.test(first)) return `gives ${describePiece(first)}`;
  // a square written "row,col" (cosc322, matrix) is bracketed, so the comma before "gives" is the only one
  const square = first.includes(",") ? `[${first}]` : first;
  return second ? `${square}, gives ${describePiece(second)}` : first;
}

/** The drawing of a piece seen from above and a little in front: a tall piece stands on a high side (a
 * column, a third of the drawing), a short one is a flat disc or tile, a little narrower; so tall and short differ
 * at a glance even as small tray pieces, and height never reads as size alone. */
export function pieceDrawing(code) {
  const [dark, round, tall, hollow] = [...code].map((digit) => digit === "1");
  const half = tall ? 30 : 26;
  const depth = tall ? 36 : 4;
  const tone = dark ? "pd" : "pl";
  const top = 50 - depth / 2;
  let body = shape(round, 50, top + depth, half, `${tone} side`) + shape(round, 50, top, half, tone);
  if (hollow) body += shape(true, 50, top, half * 0.42, `${tone} hole`);
  return svg(body);
}

function piece(value) {
  return typeof value === "number" ? CODES[value] : value;
}

function piecesInPlay(state) {
  const used = new Set(state.board.flat().filter(Boolean));
  if (state.inHand) used.add(state.inHand);
  return used;
}

const LINES = (() => {
  const lines = [];
  for (let i = 0; i < SIZE; i++) {
    lines.push(Array.from({ length: SIZE }, (_, f) => squareName(f, i)));
    lines.push(Array.from({ length: SIZE }, (_, r) => squareName(i, r)));
  }
  lines.push(Array.from({ length: SIZE }, (_, i) => squareName(i, i)));
  lines.push(Array.from({ length: SIZE }, (_, i) => squareName(i, SIZE - 1 - i)));
  return lines;
})();

/**
 * A Quarto position: `board[rank][file]` is a piece's four binary digits, or null when empty;
 * `inHand` is the piece the seat to move places (null before the first hand-over).
 * `handed` is the piece the last move handed over.
 * @typedef {import("./common.js").GameState & {board: (string | null)[][], inHand: string | null,
 *   handed?: string | null}} QuartoState
 */

/** @type {import("./common.js").Game<QuartoState>} */
export default {
  id: "quarto",
  title: "Quarto",
  moveText,
  width: SIZE,
  height: SIZE,
  seats: ["", ""], // the pieces belong to nobody
  swatch: () => "",

  initial(options) {
    return { board: emptyRanks(SIZE, SIZE, null), inHand: null, toMove: firstSeat(options), marks: [] };
  },

  decode(wire, coords) {
    return { board: copyRanks(ranksFromWire(wire.board, coords)), inHand: wire.in_hand, toMove: wire.to_move, marks: [] };
  },

  apply(state, notation) {
    const parts = notation.trim().split(/\s+/);
    const board = copyRanks(state.board);
    const marks = [];
    /** @type {string | null} */
    let handed = null;
    if (parts.length === 1 && /^[01]{4}$/.test(parts[0])) {
      handed = parts[0];
    } else {
      if (!state.inHand || at(board, parts[0])) throw new Error(`cannot place on ${parts[0]}`);
      put(board, parts[0], state.inHand);
      marks.push(parts[0]);
      handed = parts[1] || null;
    }
    return { board, inHand: handed, toMove: 1 - state.toMove, marks, handed };
  },

  steps(move, coords) {
    const handed = move.piece === null || move.piece === undefined ? null : `piece:${piece(move.piece)}`;
    if (move.square === null || move.square === undefined) return [[/** @type {string} */ (handed)]]; // the opening hands a piece
    const square = fromWire(move.square, coords, SIZE);
    return [handed ? [square, handed] : [square]];
  },

  tokenAt: (state, square) => square,
  targets: (state, token) => (token.startsWith("piece:") ? [] : [token]),

  preview(state, tokens) {
    if (!tokens.length || tokens[0].startsWith("piece:") || !state.inHand) return state;
    const board = copyRanks(state.board);
    put(board, tokens[0], state.inHand);
    return { ...state, board, inHand: null, placing: tokens[0] };
  },

  prompt(state, tokens) {
    if (!state.inHand) return "choose the piece your opponent places first";
    if (!tokens.length) return `place your piece (${describePiece(state.inHand)}) on an empty square`;
    return "choose the piece your opponent places next";
  },

  refuse(state, tokens, token, say) {
    if (token.startsWith("piece:")) {
      if (piecesInPlay(state).has(token.slice(6))) return "That piece is already in play.";
      return tokens.length ? "That piece cannot be handed over now." : "First place the piece you were given on the board.";
    }
    if (!state.inHand) return "This turn only hands a piece over: choose one of the pieces off the board.";
    if (tokens.length) return `Now choose the piece to hand over (or pick ${say(tokens[0])} again to take your piece back).`;
    return `${say(token)} is taken.`;
  },

  cell(state, square) {
    const code = at(state.board, square);
    return code ? { markup: pieceDrawing(code), text: `${describePiece(code)} piece` } : { markup: "", text: "empty" };
  },

  /** The sixteen pieces, with those on the board or in hand marked as used. */
  tray(state) {
    const used = piecesInPlay(state);
    return CODES.map((code) => ({
      token: `piece:${code}`,
      code,
      markup: pieceDrawing(code),
      text: describePiece(code),
      used: used.has(code),
    }));
  },

  winLine(state) {
    for (const line of LINES) {
      const codes = /** @type {string[]} */ (line.map((square) => at(state.board, square)).filter(Boolean));
      if (codes.length < SIZE) continue; // a square of the line is empty
      for (let digit = 0; digit < 4; digit++) {
        if (codes.every((code) => code[digit] === codes[0][digit])) return line;
      }
    }
    return [];
  },
};
