// @ts-check
/** The five games by id. */

import amazons from "./amazons.js";
import cave from "./cave.js";
import connect4 from "./connect4.js";
import quarto from "./quarto.js";
import santorini from "./santorini.js";

/** @typedef {import("./common.js").AnyGame} AnyGame */

/** @type {Record<string, AnyGame>} */
export const GAMES = Object.fromEntries([connect4, santorini, amazons, cave, quarto].map((game) => [game.id, game]));

/**
 * The game module of an id, or throws naming the ids.
 * @param {string} id
 * @returns {AnyGame}
 */
export function gameOf(id) {
  const game = GAMES[id];
  if (!game) throw new Error(`unknown game ${id}; games: ${Object.keys(GAMES).join(", ")}`);
  return game;
}
