// @ts-check
/**
 * The leaderboard (#/leaderboard, #/leaderboard/GAME) and a player's page (#/players/NAME): the Glicko-2
 * ratings of each game from /api/ratings/GAME, and one player's ratings with their chart, rated games and
 * latest games from /api/players/NAME (PROTOCOL.md §13, docs/RATINGS.md). Both are fetched again every few
 * seconds while the page is shown, so a game that ends shows up without a reload; nothing needs a login.
 */

import { getJson } from "./api.js";
import { h, replace } from "./dom.js";
import { formatDate, resultText } from "./format.js";
import { GAMES } from "./games/index.js";
import { formatChange, outcomeWord, ratingChart } from "./rating-chart.js";

const POLL_MS = 4000;
const HISTORY_SHOWN = 20;

/**
 * A row of a leaderboard (/api/ratings/GAME).
 * @typedef {{rank: number, name: string, rating: number, deviation: number, games: number, wins: number,
 *   draws: number, losses: number, last_played: number | null, provisional: boolean, anchor: boolean,
 *   ladder?: boolean}} Row
 */

function gameTitle(id) {
  return GAMES[id] ? GAMES[id].title : id;
}

function playerHref(name) {
  return `#/players/${encodeURIComponent(name)}`;
}

function replayHref(id) {
  return `#/replay/${encodeURIComponent(id)}`;
}

/**
 * Show what `path` answers, and again every few seconds while the page is visible, calling `show` only when
 * the answer changed (so nothing flickers and the keyboard focus stays); `fail` gets a failed fetch.
 * @param {string} path
 * @param {(answer: any) => void} show
 * @param {(error: any) => void} fail
 * @returns {() => void} stops following
 */
function follow(path, show, fail) {
  let last = "";
  let stopped = false;
  const load = () => {
    if (document.hidden && last) return;
    getJson(path).then((answer) => {
      const text = JSON.stringify(answer);
      if (stopped || text === last) return;
      last = text;
      show(answer);
    }).catch((error) => {
      if (!stopped) fail(error);
    });
  };
  load();
  const timer = setInterval(load, POLL_MS);
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}

/** A rating as the tables show it: "1523 ± 80", "?" after a provisional one, with an explanation. */
function ratingCell(standing) {
  const text = `${Math.round(standing.rating)} ± ${Math.round(standing.deviation)}`;
  return h("td", { class: `num rating${standing.provisional ? " provisional" : ""}` }, text,
    standing.provisional ? h("abbr", { class: "mark", title: "provisional: the deviation is above 110", text: "?" }) : null);
}

/** The name of a leaderboard row, linked to the player's page, with its badges. */
function nameCell(row) {
  return h("th", { scope: "row" }, h("a", { href: playerHref(row.name), text: row.name }),
    row.anchor ? h("span", { class: "badge anchor", title: "a house bot whose rating is pinned to its level", text: "anchor" }) : null,
    row.ladder ? h("span", { class: "badge playing", title: "on this server's ladder now", text: "on the ladder" }) : null);
}

/**
 * The leaderboard table of `game`.
 * @param {string} game
 * @param {Row[]} rows
 */
export function leaderboardTable(game, rows) {
  if (!rows.length) return h("p", { class: "empty", text: `No rated ${gameTitle(game)} games yet.` });
  return h("table", { class: "leaderboard", "data-game": game },
    h("caption", { text: `${gameTitle(game)}: ${rows.length} rated player${rows.length === 1 ? "" : "s"}` }),
    h("thead", {}, h("tr", {}, ["#", "Player", "Rating", "Games", "W–D–L", "Last played"].map((text) => h("th", { scope: "col", text })))),
    h("tbody", {}, rows.map((row) => h("tr", { "data-name": row.name },
      h("td", { class: "num", text: String(row.rank) }),
      nameCell(row),
      ratingCell(row),
      h("td", { class: "num", text: String(row.games) }),
      h("td", { class: "num", text: `${row.wins}–${row.draws}–${row.losses}` }),
      h("td", { text: formatDate(row.last_played) })))));
}

const LEGEND = "Glicko-2 ratings, one list per game, updated after every rated game. ± is the deviation: "
  + "a rating is provisional (?) while it is above 110, and it grows while a player does not play. "
  + "Anchors are house bots whose ratings are pinned to their level.";

/** The leaderboard of `game` (or of the first game with ratings), kept up to date. */
export function mountLeaderboard(main, game) {
  const tabs = h("nav", { class: "game-tabs", "aria-label": "Games" });
  const board = h("div", { class: "table-wrap" }, h("p", { class: "loading", text: "Loading…" }));
  replace(main, h("section", { class: "ratings" }, h("h1", { text: "Leaderboard" }), tabs, board,
    h("p", { class: "hint", text: LEGEND })));
  let stop = () => {};
  let gone = false;

  function show(current) {
    document.title = `${gameTitle(current)} leaderboard · Plyhall`;
    replace(tabs, Object.keys(GAMES).map((id) => h("a", { href: `#/leaderboard/${id}`, text: gameTitle(id), "aria-current": id === current ? "page" : null })));
    stop = follow(`/api/ratings/${encodeURIComponent(current)}`, (answer) => replace(board, leaderboardTable(current, answer.players || [])),
      (error) => replace(board, h("p", { class: "empty", text: error.status === 404 ? `No game ${current}.` : error.message })));
  }

  if (game) {
    show(game);
  } else {
    getJson("/api/ratings").then((answer) => {
      if (!gone) show((answer.games || [])[0] || Object.keys(GAMES)[0]);
    }).catch((error) => replace(board, h("p", { class: "empty", text: error.message })));
  }
  return () => {
    gone = true;
    stop();
  };
}

/** One game's rating of a player: the figures, the chart and the latest rated games. */
function ratingSection(name, game, standing) {
  const history = standing.history || [];
  const latest = history.slice(-HISTORY_SHOWN).reverse();
  return h("section", { class: "panel rating-card", "data-game": game },
    h("h2", {}, `${gameTitle(game)} `, h("a", { class: "small", href: `#/leaderboard/${game}`, text: `${gameTitle(game)} leaderboard` })),
    h("p", { class: "figures" },
      h("strong", { class: `rating${standing.provisional ? " provisional" : ""}`, text: `${Math.round(standing.rating)} ± ${Math.round(standing.deviation)}` }),
      standing.provisional ? h("span", { class: "badge", text: "provisional" }) : null,
      h("span", { class: "meta", text: ` ${standing.games} rated game${standing.games === 1 ? "" : "s"} · ${standing.wins}–${standing.draws}–${standing.losses} · last played ${formatDate(standing.last_played)}` })),
    history.length ? ratingChart(history, `${name}'s ${gameTitle(game)} rating after each of its ${history.length < standing.games ? "latest " : ""}${history.length} rated games`,
      history.length >= standing.games) : null,
    latest.length ? h("div", { class: "table-wrap" }, h("table", { class: "rated-games" },
      h("caption", { text: "Latest rated games" }),
      h("thead", {}, h("tr", {}, ["When", "Opponent", "Result", "Change", "Rating", ""].map((text) => h("th", { scope: "col", text })))),
      h("tbody", {}, latest.map((rated) => h("tr", {},
        h("td", { text: formatDate(rated.played_at) }),
        h("td", {}, h("a", { href: playerHref(rated.opponent), text: rated.opponent })),
        h("td", { text: outcomeWord(rated.score) + (rated.weight < 1 ? ` (counted ${Math.round(rated.weight * 100)}%)` : "") }),
        h("td", { class: `num change${rated.change > 0 ? " up" : rated.change < 0 ? " down" : ""}`, text: formatChange(rated.change) }),
        h("td", { class: "num", text: String(Math.round(rated.rating)) }),
        h("td", {}, h("a", { href: replayHref(rated.id), text: "Replay" }))))))) : null);
}

/** A player's latest games, rated or not. */
function recentTable(games) {
  if (!games.length) return h("p", { class: "empty", text: "No games yet." });
  return h("div", { class: "table-wrap" }, h("table", { class: "recent-games" },
    h("thead", {}, h("tr", {}, ["When", "Game", "Players", "Result", "", ""].map((text) => h("th", { scope: "col", text })))),
    h("tbody", {}, games.map((game) => h("tr", {},
      h("td", { class: "date", text: formatDate(game.ended_at || game.started_at) }),
      h("td", { text: gameTitle(game.game) }),
      h("td", { class: "players" }, game.players.map((player, i) => [i ? " vs " : "",
        h("a", { href: playerHref(player), text: player, class: game.winner === i ? "won" : null })])),
      h("td", { class: "outcome", text: resultText(game, game.players) }),
      h("td", { text: game.rated ? "rated" : "" }),
      h("td", {}, h("a", { href: replayHref(game.id), text: "Replay" })))))));
}

/** The page of one player (`/api/players/NAME`), from its answer. */
export function renderPlayer(player) {
  const games = Object.keys(player.ratings || {});
  // each game's section links its own leaderboard; the nav links the leaderboard as a whole
  return h("section", { class: "player-page" },
    h("h1", { text: player.name }),
    h("p", { class: "meta", text: games.length ? `Rated in ${games.map(gameTitle).join(", ")}.` : "Not rated yet." }),
    games.map((game) => ratingSection(player.name, game, player.ratings[game])),
    h("section", { class: "recent" }, h("h2", { text: "Latest games" }), recentTable(player.recent || [])));
}

/** One player's page, kept up to date. */
export function mountPlayer(main, name) {
  document.title = `${name} · Plyhall`;
  replace(main, h("section", { class: "player-page" }, h("h1", { text: name }), h("p", { class: "loading", text: "Loading…" })));
  return follow(`/api/players/${encodeURIComponent(name)}?limit=20`, (answer) => replace(main, renderPlayer(answer)), (error) => {
    replace(main, h("section", { class: "player-page" }, h("h1", { text: name }),
      h("p", { class: "empty", text: error.status === 404 ? `${name} has not played here.` : error.message }),
      h("p", {}, h("a", { href: "#/leaderboard", text: "Leaderboard" }))));
  });
}
