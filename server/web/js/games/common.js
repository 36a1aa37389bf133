// @ts-check
/**
 * What the game modules share: the contract each of them fulfils (the type `Game` below), and
 * helpers for boards, lines and drawings.
 *
 * Each game module exports one object, a `Game` over its own kind of position. States hold
 * boards as lists of ranks, rank 1 first; squares are algebraic names. The page reads only the
 * fields every state has (`GameState`); the rest it hands back to the game's own functions.
 */

/** @typedef {import("../coords.js").Coords} Coords */

/**
 * A square's algebraic name, "d4" (file d, rank 4), whatever the player's convention.
 * @typedef {string} Square
 */

/**
 * What one click picks: a square name, or "piece:0101" (a Quarto piece), or "col:3" (a Connect
 * Four column, from 0).
 * @typedef {string} Token
 */

/**
 * Writes a square in the player's convention ("d4", "4,4" or "6,3"); `say.coords` names that convention.
 * @typedef {((square: Square) => string) & {coords: Coords}} Say
 */

/**
 * What every game's position holds; each game adds its board (and Quarto the piece in hand).
 * @typedef {object} GameState
 * @property {number} toMove         the seat to move (0 or 1)
 * @property {Square[]} marks        the squares the last move touched
 * @property {Square} [dropped]      Connect Four: the square a disc just dropped on (it falls there)
 * @property {string | null} [inHand]  Quarto: the piece to place, four binary digits
 * @property {Square} [placing]      Quarto: where the piece in hand is being placed
 */

/**
 * The options of a game, as `create_room` and recorded games carry them.
 * @typedef {object} GameOptions
 * @property {number | string} [first]  the seat that moves first: 0 or 1, or "black" / "white"
 */

/**
 * A square's drawing (SVG markup built by the game module, never from messages), what it holds in
 * words, and `empty: true` when the drawing shows no piece (a Connect Four hole).
 * @typedef {object} Cell
 * @property {string} markup
 * @property {string} text
 * @property {boolean} [empty]
 */

/**
 * A piece off the board (Quarto): its token, its code, its drawing, its words, and whether it is in play.
 * @typedef {object} TrayItem
 * @property {Token} token
 * @property {string} code
 * @property {string} markup
 * @property {string} text
 * @property {boolean} used
 */

/**
 * The labels on a board's edges: files left to right, ranks top to bottom (or `null`: no rank
 * labels), and whether the files go above the board.
 * @typedef {object} EdgeLabels
 * @property {string[]} files
 * @property {string[] | null} ranks
 * @property {boolean} [filesOnTop]
 */

/**
 * One game, as the page plays, shows and replays it. `S` is the game's kind of position.
 *
 * @template {GameState} [S=GameState]
 * @typedef {object} Game
 * @property {string} id                     the protocol's game id ("connect4", ...)
 * @property {string} title                  the game's name for people
 * @property {number} width                  files
 * @property {number} height                 ranks
 * @property {string[]} seats                what each seat's pieces are called ("" when they belong to nobody)
 * @property {(seat: number) => string} swatch    a seat's piece, drawn small beside its player's name
 * @property {(options?: GameOptions) => S} initial           the start position (`options.first`: who moves first)
 * @property {(wire: any, coords: Coords) => S} decode         a `state` map from the server, in the player's convention
 * @property {(state: S, notation: string) => S} apply         the position after a move in notation (the same for
 *     everyone); `marks` lists the squares the move touched; throws on a move it cannot follow
 * @property {(move: any, coords: Coords) => Token[][]} steps  the ways to pick a legal move (the server's structured
 *     form, from `legal_moves`) click by click
 * @property {(state: S, square: Square) => Token} tokenAt     what a click on a square picks
 * @property {(state: S, token: Token) => Square[]} targets    the squares that show a token as a legal target
 * @property {(state: S, tokens: Token[]) => S} preview        the position as it looks while the player picks
 * @property {(state: S, tokens: Token[], say: Say) => string} prompt  what to pick next: the end of the sentence
 *     "Your move: …." (lower case, no colon, no full stop), as "drop a disc in a column"
 * @property {(state: S, tokens: Token[], token: Token, say: Say) => string} refuse  why a token that is not a
 *     legal target cannot be picked
 * @property {(state: S, square: Square) => Cell} cell         a square's drawing and words
 * @property {(state: S) => Square[]} winLine                  the squares of a winning line, if there is one
 * @property {(state: S) => TrayItem[]} [tray]                 (Quarto) the pieces off the board
 * @property {(coords: Coords) => EdgeLabels} [edges]          the board's edge labels, when not the convention's
 * @property {(square: Square, coords: Coords) => string} [spoken]  a square as a screen reader says it, when not
 *     as the convention writes it
 * @property {(notation: string) => string} [moveText]  a move in words for the move lists, when its notation is
 *     not how people say it (Quarto's pieces)
 * @property {(notation: string, coords: Coords) => string} [moveIn]  a move in the player's convention, when it is
 *     not its notation with each square relabelled (Connect Four's columns)
 * @property {number} [topSeat]  the seat whose pieces start at the top of the board (Amazons: black), for games
 *     whose board can be flipped
 */

/**
 * A game module of any game, as the views hold one: they only pass it its own states.
 * @typedef {Game<any>} AnyGame
 */

import { notationIn, parseName, squareName } from "../coords.js";

/**
 * An empty board: `height` ranks of `width` cells.
 * @template T
 * @param {number} width
 * @param {number} height
 * @param {T} fill
 * @returns {T[][]}
 */
export function emptyRanks(width, height, fill) {
  return Array.from({ length: height }, () => Array(width).fill(fill));
}

/**
 * A copy of a board that can be changed.
 * @template T
 * @param {T[][]} ranks
 * @returns {T[][]}
 */
export function copyRanks(ranks) {
  return ranks.map((rank) => rank.slice());
}

/**
 * The cell of `square` on a board.
 * @template T
 * @param {T[][]} ranks
 * @param {Square} square
 * @returns {T}
 */
export function at(ranks, square) {
  const { f, r } = parseName(square);
  return ranks[r][f];
}

/**
 * Set the cell of `square` (on a copy you own).
 * @template T
 * @param {T[][]} ranks
 * @param {Square} square
 * @param {T} value
 */
export function put(ranks, square, value) {
  const { f, r } = parseName(square);
  ranks[r][f] = value;
}

/**
 * The seat that moves first: option `first` as 0/1 or "black"/"white".
 * @param {GameOptions} [options]
 * @returns {number}
 */
export function firstSeat(options) {
  const first = options ? options.first : 0;
  return first === 1 || first === "white" ? 1 : 0;
}

/**
 * The squares next to `square` (8 directions) on a board of the given size.
 * @param {Square} square
 * @param {number} width
 * @param {number} height
 * @returns {Square[]}
 */
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

/**
 * The first line of `length` equal, non-empty cells (across, up, both diagonals), or [].
 * @param {number[][]} ranks
 * @param {number} length
 * @returns {Square[]}
 */
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

/**
 * A move as the move lists, the replay and the analysis show it: in the player's convention (the same squares as the
 * board's edges), and in words where the game says moves in words (Quarto).
 * @param {AnyGame} game
 * @param {string} notation  the move's notation (algebraic, the same for everyone)
 * @param {Coords} coords
 * @returns {string}
 */
export function showMove(game, notation, coords) {
  const written = game.moveIn ? game.moveIn(notation, coords) : notationIn(notation, coords, game.height);
  return game.moveText ? game.moveText(written) : written;
}
