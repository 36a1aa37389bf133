// @ts-check
/**
 * Squares in the three coordinate conventions of the protocol (PROTOCOL.md §11).
 *
 * Inside the page every square is its algebraic name ("d4": file d, rank 4, rank 1 at
 * the bottom) and boards are lists of ranks, rank 1 first. The convention the player
 * chose only matters at the edges: reading the server's squares and boards, and the
 * labels people see (board edges, aria-labels, messages).
 */

/**
 * A coordinate convention: how a player writes squares and reads boards.
 * @typedef {"algebraic" | "cosc322" | "matrix"} Coords
 */

/** The conventions, each with how the login form describes it. */
export const CONVENTIONS = {
  algebraic: "algebraic: a1 at the bottom left",
  cosc322: "cosc322: [row, col] from 1, row 1 at the bottom",
  matrix: "matrix: [row, col] from 0, row 0 at the top",
};

const FILES = "abcdefghijklmnopqrstuvwxyz";

/** The algebraic name of the square on file `f` (0 = a) and rank `r` (0 = rank 1). */
export function squareName(f, r) {
  return FILES[f] + (r + 1);
}

/** File and rank (both from 0) of an algebraic name. */
export function parseName(name) {
  return { f: FILES.indexOf(name[0]), r: Number(name.slice(1)) - 1 };
}

/** The algebraic name of a square the server sent in `coords` on a board `height` ranks high. */
export function fromWire(value, coords, height) {
  if (typeof value === "string") return value; // any convention may use names
  const [row, col] = value;
  return coords === "matrix" ? squareName(col, height - 1 - row) : squareName(col - 1, row - 1);
}

/** A board's rows as the server sent them, reordered rank 1 first. */
export function ranksFromWire(rows, coords) {
  return coords === "matrix" ? rows.slice().reverse() : rows.slice();
}

/** How the player's convention writes a square: "d4", "4,4" (cosc322) or "6,3" (matrix). */
export function label(name, coords, height) {
  if (coords === "algebraic") return name;
  const { f, r } = parseName(name);
  return coords === "matrix" ? `${height - 1 - r},${f}` : `${r + 1},${f + 1}`;
}

/** A square as a screen reader should say it in the player's convention. */
export function spoken(name, coords, height) {
  if (coords === "algebraic") return name;
  const [row, col] = label(name, coords, height).split(",");
  return `row ${row} column ${col}`;
}

/** Edge labels: files left to right and ranks top to bottom, in the player's convention. */
export function edgeLabels(width, height, coords) {
  const files = [];
  const ranks = [];
  for (let f = 0; f < width; f++) files.push(coords === "algebraic" ? FILES[f] : String(coords === "matrix" ? f : f + 1));
  for (let r = height - 1; r >= 0; r--) ranks.push(String(coords === "matrix" ? height - 1 - r : r + 1));
  return { files, ranks, filesOnTop: coords === "matrix" };
}

/**
 * A move's notation (always algebraic, as the server's `moved.notation`) with each square written in the player's
 * convention: "f1-c1/h6" reads "1,6-1,3/6,8" in cosc322 and "9,5-9,2/4,7" in matrix on a 10-rank board.
 * @param {string} notation
 * @param {Coords} coords
 * @param {number} height the board's ranks
 * @returns {string}
 */
export function notationIn(notation, coords, height) {
  if (coords === "algebraic") return notation;
  return notation.replace(/\b([a-j])(10|[1-9])\b/g, (square) => label(square, coords, height));
}
