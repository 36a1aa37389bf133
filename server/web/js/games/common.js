/**
 * What the game modules share. Each game module exports one object with:
 *
 *   id, title, width, height, seats (what each seat's pieces are called)
 *   initial(options) -> state           the start position (`options.first`: who moves first)
 *   decode(wire, coords) -> state       a `state` map from the server, in the player's convention
 *   apply(state, notation) -> state     the position after a move in notation (the same for everyone);
 *                                       `state.marks` lists the squares the move touched
 *   steps(move, coords) -> [[token]]    the ways to pick a legal move (structured, from `legal_moves`)
 *                                       click by click; a token is a square name or "piece:0101"/"col:3"
 *   tokenAt(state, square) -> token     what a click on a square picks
 *   targets(state, token) -> [square]   the squares that show a token as a legal target
 *   preview(state, tokens) -> state     the position as it looks while the player picks
 *   prompt(state, tokens, say) -> text  what to pick next
 *   refuse(state, tokens, token, say)   why a token that is not a legal target cannot be picked
 *   cell(state, square) -> {markup, text, empty?}   a square's drawing (SVG), what it holds in words,
 *                                       and `empty: true` when the drawing shows no piece (a hole)
 *   winLine(state) -> [square]          the squares of a winning line, if there is one
 *   tray(state) (Quarto)                the pieces off the board
 *
 * States hold boards as lists of ranks, rank 1 first; squares are algebraic names. `say(square)`
 * writes a square in the player's convention; `say.coords` names that convention.
 */

import { parseName, squareName } from "../coords.js";

/** An empty board: `height` ranks of `width` cells. */
export function emptyRanks(width, height, fill) {
  return Array.from({ length: height }, () => Array(width).fill(fill));
}

/** A copy of a board that can be changed. */
export function copyRanks(ranks) {
  return ranks.map((rank) => rank.slice());
}

/** The cell of `square` on a board. */
export function at(ranks, square) {
  const { f, r } = parseName(square);
  return ranks[r][f];
}

/** Set the cell of `square` (on a copy you own). */
export function put(ranks, square, value) {
  const { f, r } = parseName(square);
  ranks[r][f] = value;
}

/** The seat that moves first: option `first` as 0/1 or "black"/"white". */
export function firstSeat(options) {
  const first = options ? options.first : 0;
  return first === 1 || first === "white" ? 1 : 0;
}

/** The squares next to `square` (8 directions) on a board of the given size. */
export function neighbours(square, width, height) {
  const { f, r } = parseName(square);
  const found = [];
  for (let df = -1; df <= 1; df++) {
    for (let dr = -1; dr <= 1; dr++) {
      const nf = f + df;
      const nr = r + dr;
      if ((df || dr) && nf >= 0 && nf < width && nr >= 0 && nr < height) found.push(squareName(nf, nr));
    }
  }
  return found;
}

/** The first line of `length` equal, non-empty cells (across, up, both diagonals), or []. */
export function findLine(ranks, length) {
  const height = ranks.length;
  const width = ranks[0].length;
  for (let r = 0; r < height; r++) {
    for (let f = 0; f < width; f++) {
      const stone = ranks[r][f];
      if (!stone) continue;
      for (const [df, dr] of [[1, 0], [0, 1], [1, 1], [1, -1]]) {
        const line = [];
        for (let i = 0; i < length; i++) {
          const nf = f + df * i;
          const nr = r + dr * i;
          if (nf < 0 || nf >= width || nr < 0 || nr >= height || ranks[nr][nf] !== stone) break;
          line.push(squareName(nf, nr));
        }
        if (line.length === length) return line;
      }
    }
  }
  return [];
}

/** An SVG drawing in a 100 by 100 box (or the part of it `viewBox` names). */
export function svg(body, viewBox = "0 0 100 100") {
  return `<svg viewBox="${viewBox}" aria-hidden="true" focusable="false">${body}</svg>`;
}

/** A round stone of a seat (Connect Four discs), `kind` naming its CSS class. */
export function disc(kind) {
  return svg(`<circle cx="50" cy="50" r="40" class="${kind}"/><circle cx="50" cy="50" r="28" class="${kind} rim"/>`);
}

/** A crowned piece (Amazons queens), class `kind`. */
export function crown(kind) {
  return svg(`<path class="${kind}" d="M24 74 L17 34 L36 52 L50 24 L64 52 L83 34 L76 74 Z"/>`
    + `<rect class="${kind}" x="22" y="76" width="56" height="10" rx="3"/>`
    + `<circle class="${kind}" cx="17" cy="32" r="5"/><circle class="${kind}" cx="50" cy="21" r="5"/>`
    + `<circle class="${kind}" cx="83" cy="32" r="5"/>`);
}
