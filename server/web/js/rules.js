// @ts-check
/**
 * The rules of each game for a newcomer (#/rules/GAME; #/rules lists the games): what a turn is, how a game is won,
 * and a diagram drawn by the game's own board module (the same drawing as in a room), from a few moves in notation.
 */

import { BoardView } from "./board.js";
import { h, replace } from "./dom.js";
import { GAMES } from "./games/index.js";

/** @typedef {import("./app.js").App} App */

/**
 * One game's rules: a line saying what the game is, the rules as a list, and the diagram: moves (notation) played
 * from the start, the squares to show as legal targets, and what the diagram shows.
 * @typedef {object} Rules
 * @property {string} intro
 * @property {string[]} rules
 * @property {string[]} moves
 * @property {(state: any) => string[]} [targets]
 * @property {string} caption
 */

/** @type {Record<string, Rules>} */
const RULES = {
  connect4: {
    intro: "Two players drop discs into a frame of 7 columns and 6 rows. Red moves first.",
    rules: [
      "On your turn, drop one disc into a column that is not full: it falls to the lowest empty square.",
      "Four of your discs in a row wins: across, up, or on either diagonal.",
      "A full frame with no four in a row is a draw.",
    ],
    moves: ["4", "4", "3", "3", "2", "5", "1"],
    caption: "Red has dropped four in a row along the bottom (columns 1 to 4): the winning four are ringed.",
  },
  santorini: {
    intro: "Two builders on a 5 by 5 island, each with two workers (blue moves first). Climb to the third level to win.",
    rules: [
      "Set-up: blue places both workers on empty squares, then gold places both of theirs.",
      "A turn: pick one of your workers and move it one step in any of the 8 directions, onto a square with no worker "
        + "and no dome, at most one level higher than where it stands (down any number of levels is fine).",
      "Then build with that worker on a square next to it that has no worker and no dome: a block raises it one level "
        + "(levels 1, 2, 3); building on level 3 puts a dome on it, which nobody can stand on.",
      "Moving up onto level 3 wins at once. A player who cannot make a whole turn (move and build) loses.",
    ],
    moves: ["b2 b4", "d2 d4", "b4-b3/c4", "d4-d5/c4", "b2-a2/b2", "d2-e2/d2", "b3-b2/c3", "d5-d4/c4", "a2-b3/c3",
      "d4-d5/c4"],
    caption: "Blue's worker on b2 stands on level 1 and may climb to c3 (level 2); gold has just built on c4's level 3, "
      + "which puts a dome on it (the navy cap), so nobody can step up there to win.",
  },
  amazons: {
    intro: "Two players on a 10 by 10 board, each with four queens. Black moves first (the COSC 322 convention).",
    rules: [
      "A turn has two parts. First move one of your queens like a chess queen: any number of empty squares in a "
        + "straight line, across, up or diagonally; it cannot jump over queens or arrows.",
      "Then that queen shoots an arrow from where it landed, again like a queen move. The arrow's square is burnt: "
        + "nothing may stand on it or pass over it for the rest of the game.",
      "There is no capturing. A player who cannot move any queen on their turn loses: wall the other side in.",
    ],
    moves: ["d10-d4/g7", "g1-g6/e4"],
    caption: "Black's queen went from d10 to d4 and shot an arrow to g7; white's queen went from g1 to g6 and shot "
      + "at e4. The highlighted squares show the last moves.",
  },
  "magnetic-cave": {
    intro: "Two players place bricks on an 8 by 8 board whose left and right sides are magnets. Black moves first.",
    rules: [
      "A brick goes on an empty square in the first or last column, or on an empty square right beside (left or "
        + "right of) another brick: every brick sticks to a wall or to another brick in its row.",
      "So in each row only the outermost empty squares are open.",
      "Five of your bricks in a row wins: across, up, or on either diagonal. A full board with no five is a draw.",
    ],
    moves: ["a4", "h4", "b4", "a5", "h5", "g5"],
    targets(state) {
      const open = [];
      state.cells.forEach((rank, r) => rank.forEach((cell, f) => {
        if (cell) return;
        const stuck = f === 0 || f === rank.length - 1 || rank[f - 1] || rank[f + 1];
        if (stuck) open.push(`${"abcdefgh"[f]}${r + 1}`);
      }));
      return open;
    },
    caption: "The dots are the squares where the next brick may go: the two end columns, and right beside a brick.",
  },
  quarto: {
    intro: "Two players share 16 pieces, each light or dark, square or round, short or tall, solid or hollow.",
    rules: [
      "You never choose the piece you place: your opponent hands it to you. The first turn only hands a piece over.",
      "A turn: place the piece you were given on any empty square, then choose one of the remaining pieces and hand it "
        + "to your opponent.",
      "Whoever places the fourth piece of a row, column or diagonal whose four pieces share one attribute (all dark, "
        + "all round, all tall, all hollow, or all of the opposite) wins.",
      "A full board with no such line is a draw.",
    ],
    moves: ["0010", "a1 0011", "b1 0110", "c1 1010", "d1"],
    caption: "The bottom row's four pieces are all tall: the player who placed the last of them has won.",
  },
};

/**
 * The rules page of `id`, or the list of games' rules.
 * @param {HTMLElement} main
 * @param {string} id  a game id, or "" for the list
 * @param {App} app
 * @returns {() => void}
 */
export function mountRules(main, id, app) {
  window.scrollTo(0, 0);
  const game = GAMES[id];
  const others = Object.values(GAMES).map((each) => h("li", {}, h("a", { href: `#/rules/${each.id}`, text: each.title })));
  if (!game || !RULES[id]) {
    replace(main, h("section", { class: "rules-page" }, h("h1", { text: "Rules" }),
      id ? h("p", { class: "notice error", text: `There is no game ${id}: choose one of these.` }) : null,
      h("ul", {}, others)));
    document.title = "Rules · Plyhall";
    return () => {};
  }
  const rules = RULES[id];
  let state = game.initial({});
  for (const move of rules.moves) state = game.apply(state, move);
  const board = new BoardView(game, app.coords(), { label: `${game.title} board, an example` });
  board.update(state, { targets: new Set(rules.targets ? rules.targets(state) : []) });
  replace(main, h("section", { class: "rules-page" },
    h("h1", { text: `How to play ${game.title}` }),
    h("p", { class: "lead", text: rules.intro }),
    h("div", { class: "rules-body" },
      h("div", {}, h("ol", {}, rules.rules.map((text) => h("li", { text }))),
        h("p", {}, "Play it: ", h("a", { href: "#/lobby", text: "the lobby" }), " (seek a player, or play a bot)."),
        h("p", { class: "muted" }, "Other games: ", Object.values(GAMES).filter((each) => each.id !== id)
          .flatMap((each, i) => [i ? " · " : "", h("a", { href: `#/rules/${each.id}`, text: each.title })]))),
      h("figure", { class: "diagram" }, board.element, h("figcaption", { text: rules.caption })))));
  document.title = `Rules of ${game.title} · Plyhall`;
  return () => {};
}
