// @ts-check
/**
 * Tournaments (#/tournaments, #/tournaments/ID): standings, crosstable, schedule and the
 * games being played, updated as games finish (pushed by `watch_tournament`, or fetched
 * again every few seconds when the server does not push).
 */

import { getJson } from "./api.js";
import { h, replace } from "./dom.js";
import { formatPoints } from "./format.js";
import { GAMES } from "./games/index.js";

const POLL_MS = 3000; // a tournament followed without a login (it lagged the list by up to 10 s: a game over still "running")
const LIST_POLL_MS = 3000;

function gameTitle(id) {
  return GAMES[id] ? GAMES[id].title : id;
}

function playerHref(name) {
  return `#/players/${encodeURIComponent(name)}`;
}

/** An entrant's name linked to their page (leaderboard.js). */
function playerLink(name) {
  return name ? h("a", { href: playerHref(name), text: name }) : "";
}

/**
 * The estimate of the time left in words, counted down from the server's `seconds_left` by the seconds
 * `elapsed` since it came: "about 12 min left", "about 40 s left", "any moment now" (the last games are late).
 */
export function timeLeftText(secondsLeft, elapsed = 0) {
  const left = secondsLeft - elapsed;
  if (left >= 90) return `about ${Math.round(left / 60)} min left`;
  if (left >= 10) return `about ${Math.round(left / 10) * 10} s left`;
  return "any moment now";
}

/** "3 of 12 games played · about 4 min left"; `elapsed`: seconds since the server sent `progress`. */
export function progressText(progress, elapsed = 0) {
  if (!progress) return "";
  let text = progress.forfeits
    ? `${progress.done} of ${progress.total} games done: ${progress.done - progress.forfeits} played, ${progress.forfeits} forfeited`
    : `${progress.done} of ${progress.total} games played`;
  if (progress.seconds_left && progress.done < progress.total) text += ` · ${timeLeftText(progress.seconds_left, elapsed)}`;
  return text;
}

/** The announcement of a finished event: its winner, or the players who share first place (a tie is a tie). */
export function winnerText(rows) {
  const first = rows.filter((row) => row.rank === 1);
  if (!first.length) return null;
  const points = formatPoints(first[0].points);
  if (first.length === 1) return h("p", { class: "winner" }, playerLink(first[0].name), ` wins with ${points} point${points === "1" ? "" : "s"}.`);
  const names = first.map((row, i) => [i === 0 ? "" : i === first.length - 1 ? " and " : ", ", playerLink(row.name)]);
  return h("p", { class: "winner tie" }, `A ${first.length}-way tie for first place: `, names,
    `, with ${points} point${points === "1" ? "" : "s"} each and equal tie-breaks.`);
}

function progressBar(progress) {
  if (!progress || !progress.total) return null;
  return h("progress", { max: String(progress.total), value: String(progress.done), "aria-label": progressText(progress) });
}

/**
 * The standings' tie-break column, by the key the server sends (`standings.tiebreak`): its heading and
 * what it counts (server/tournament/tiebreaks.py).
 */
const TIEBREAKS = {
  "sonneborn-berger": { text: "SB", title: "Sonneborn-Berger: the points of the opponents beaten plus half the points of those drawn" },
  "buchholz": { text: "Buchholz", title: "Buchholz: the sum of the opponents' points" },
  "median-buchholz": { text: "Median Buchholz", title: "Median Buchholz: the sum of the opponents' points without the highest and the lowest" },
  "none": { text: "Tie-break", title: "No tie-break: players equal on points share a rank" },
};

/** The heading and explanation of tie-break `key`; a key this page does not know is shown as words, not as a key. */
export function tiebreakHeading(key) {
  if (TIEBREAKS[key]) return TIEBREAKS[key];
  const words = String(key || "tie-break").replace(/[-_]+/g, " ");
  return { text: words.charAt(0).toUpperCase() + words.slice(1), title: null };
}

/** A table; a heading is its text, or `{ text, title }` for a short heading whose title says what it means. */
function table(caption, headings, rows, className) {
  const th = (heading) => (typeof heading === "string" ? h("th", { scope: "col", text: heading })
    : h("th", { scope: "col", title: heading.title }, heading.title ? h("abbr", { title: heading.title, text: heading.text }) : heading.text));
  return h("div", { class: "table-wrap" }, h("table", { class: className },
    h("caption", { text: caption }),
    h("thead", {}, h("tr", {}, headings.map(th))),
    h("tbody", {}, rows)));
}

function standingsTable(standings) {
  const tiebreak = tiebreakHeading(standings.tiebreak);
  const rows = standings.rows.map((row) => h("tr", {},
    h("td", { class: "num", text: String(row.rank) }),
    h("th", { scope: "row" }, playerLink(row.name)),
    h("td", { class: "num", text: formatPoints(row.points) }),
    h("td", { class: "num", text: `${row.played}/${row.games}` }),
    h("td", { class: "num", text: `${row.wins}–${row.draws}–${row.losses}` }),
    h("td", { class: "num", text: row.forfeit_wins || row.forfeit_losses ? `+${row.forfeit_wins || 0} −${row.forfeit_losses || 0}` : "0" }),
    h("td", { class: "num", text: String(row.byes || 0) }),
    h("td", { class: "num", text: row.tiebreak === null || row.tiebreak === undefined ? "" : formatPoints(row.tiebreak) }),
    h("td", { class: "num", text: row.elo === null || row.elo === undefined ? "" : `${Math.round(row.elo)}${row.elo_margin ? ` ± ${Math.round(row.elo_margin)}` : ""}` })));
  const headings = [{ text: "#", title: "Rank" }, "Player", "Points", { text: "Played", title: "Games played of the games to play" },
    { text: "W–D–L", title: "Wins–draws–losses" }, { text: "Forfeits", title: "Games won (+) and lost (−) by forfeit" }, "Byes",
    tiebreak, { text: "Elo", title: "Rating from this event's games (the entrants average 0) ± its 95% margin" }];
  const note = standings.tiebreak === "none" || !tiebreak.title ? tiebreak.title : `Equal points are ranked by ${tiebreak.title}.`;
  return [table("Standings", headings, rows, "standings"), note ? h("p", { class: "hint tiebreak", text: note }) : null];
}

function crosstable(standings) {
  const names = standings.rows.map((row) => row.name);
  const cross = standings.crosstable || {};
  const rows = names.map((name, i) => h("tr", {},
    h("th", { scope: "row" }, `${i + 1}. `, playerLink(name)),
    names.map((other) => h("td", { class: name === other ? "self" : "num", text: name === other ? "" : ((cross[name] || {})[other] || []).join(" ") }))));
  return table("Crosstable (1 win, = draw, 0 loss, + and − forfeits)", ["", ...names.map((_, i) => String(i + 1))], rows, "crosstable");
}

function scheduleTable(schedule) {
  const rows = schedule.map((game) => {
    let link = "";
    if (game.status === "playing" && game.room) link = h("a", { href: `#/room/${encodeURIComponent(game.room)}`, text: "Watch" });
    else if (game.record) link = h("a", { href: `#/replay/${encodeURIComponent(game.record)}`, text: "Replay" });
    return h("tr", { class: game.status },
      h("td", { class: "num", text: String(game.number) }),
      h("td", { class: "num", text: String(game.round) }),
      h("td", {}, playerLink(game.white)),
      h("td", {}, playerLink(game.black)),
      h("td", { class: "num", text: typeof game.opening === "number" ? String(game.opening + 1) : "" }), // (0 is the first)
      h("td", { text: game.status }),
      h("td", { text: game.result || "" }),
      h("td", {}, link));
  });
  return table("Schedule", ["Game", "Round", "First", "Second", "Opening", "Status", "Result", ""], rows, "schedule");
}

const ACCURACY_MS = 5000;

/** Each entrant's accuracy over the event's analysed games (`/api/tournaments/ID/analysis`), or nothing. */
function accuracyTable(accuracy) {
  const players = Object.entries((accuracy && accuracy.players) || {});
  if (!players.length) return null;
  players.sort(([, a], [, b]) => (b.accuracy ?? -1) - (a.accuracy ?? -1));
  const rows = players.map(([name, p]) => h("tr", {},
    h("th", { scope: "row", text: name }),
    h("td", { class: "num", text: p.accuracy === null ? "–" : `${p.accuracy}%` }),
    h("td", { class: "num", text: String(p.blunders) }),
    h("td", { class: "num", text: String(p.mistakes) }),
    h("td", { class: "num", text: String(p.inaccuracies) }),
    h("td", { class: "num", text: String(p.games) })));
  return table("Accuracy (the master engine's analysis)", ["Player", "Accuracy", "Blunders", "Mistakes", "Inaccuracies", "Games analysed"], rows, "accuracy");
}

/** The page of one tournament, from the object `/api/tournaments/ID` answers (and the entrants' accuracy). */
export function renderTournament(tournament, accuracy = null) {
  const live = (tournament.schedule || []).filter((game) => game.status === "playing");
  const standings = tournament.standings || { rows: [] };
  const over = tournament.status === "finished" || tournament.status === "cancelled";
  return h("section", { class: "tournament", "data-status": tournament.status },
    h("header", { class: "room-head" },
      h("h1", { text: tournament.name }),
      h("p", { class: "meta", text: `${gameTitle(tournament.game)} · ${tournament.format} · ${tournament.status} · ${(tournament.entrants || []).length} entrants` })),
    h("div", { class: "progress" }, progressBar(tournament.progress), h("span", { class: "progress-text", text: progressText(tournament.progress) })),
    tournament.stopped_early ? h("p", { class: "stopped-early", text: `Stopped early: ${tournament.stopped_early}.` }) : null,
    tournament.sprt ? h("p", { class: "sprt" }, playerLink((tournament.entrants || [])[0] || ""), ` against the others: ${tournament.sprt.line}`) : null,
    tournament.status === "finished" ? winnerText(standings.rows) : null,
    over ? null : h("section", { class: "panel live" }, h("h2", { text: "Playing now" }),
      live.length
        ? h("ul", {}, live.map((game) => h("li", {}, playerLink(game.white), " vs ", playerLink(game.black), " · ", h("a", { href: `#/room/${encodeURIComponent(game.room)}`, text: "Watch" }))))
        : h("p", { class: "empty", text: "No game is being played right now." })),
    standings.rows.length ? standingsTable(standings) : h("p", { class: "empty", text: "No standings yet." }),
    standings.rows.length ? crosstable(standings) : null,
    accuracyTable(accuracy),
    (tournament.schedule || []).length ? scheduleTable(tournament.schedule) : null,
    h("p", {}, h("a", { href: "#/tournaments", text: "All tournaments" })));
}

/** The list of tournaments, kept up to date (an event created or finished shows without a reload); "no
 * tournaments" when there are none or the server has none. */
export function mountTournamentList(main) {
  const list = h("div", {}, h("p", { text: "Loading…" }));
  replace(main, h("section", { class: "tournaments" }, h("h1", { text: "Tournaments" }), list));
  let shown = "";

  function load() {
    getJson("/api/tournaments").then((answer) => {
      const tournaments = answer.tournaments || [];
      const text = JSON.stringify(tournaments);
      if (text === shown) return; // unchanged: the list (and a reader's place in it) stays as it is
      shown = text;
      if (!tournaments.length) {
        replace(list, h("p", { class: "empty", text: "No tournaments." }));
        return;
      }
      replace(list, h("ul", { class: "tournament-list" }, tournaments.map((t) => h("li", {},
        h("a", { href: `#/tournaments/${encodeURIComponent(t.id)}`, text: t.name }),
        h("span", { class: "meta", text: ` ${gameTitle(t.game)} · ${t.format} · ${t.status} · ${(t.entrants || []).length} entrants` }),
        progressBar(t.progress),
        h("span", { class: "meta", text: ` ${progressText(t.progress)}` })))));
    }).catch((error) => {
      replace(list, h("p", { class: "empty", text: error.status === 404 ? "No tournaments." : error.message }));
    });
  }

  load();
  const poll = setInterval(load, LIST_POLL_MS);
  return () => clearInterval(poll);
}

/** One tournament, kept up to date. */
export function mountTournament(main, id, app) {
  const { session } = app;
  const stops = [];
  /** @type {any} */
  let poll = null; // setInterval's id while polling

  /** @type {any} */
  let accuracy = null; // the entrants' accuracy, fetched again when more games are done
  let accuracyAt = -1;
  let accuracyTime = 0;

  let shownAt = 0; // when the tournament shown came, for the estimate's countdown
  let shownProgress = null;
  const countdown = setInterval(() => {
    const text = main.querySelector(".tournament .progress-text");
    if (text && shownProgress) text.textContent = progressText(shownProgress, (Date.now() - shownAt) / 1000);
  }, 1000);

  function show(tournament) {
    shownAt = Date.now();
    shownProgress = tournament.progress || null;
    replace(main, renderTournament(tournament, accuracy));
    const done = (tournament.progress && tournament.progress.done) || 0;
    const analysed = Object.values((accuracy && accuracy.players) || {}).reduce((sum, p) => sum + p.games, 0) / 2;
    const now = Date.now();
    // again when more games are done, or (every few seconds) while some done games wait for their analysis
    if (done !== accuracyAt || (analysed < done && now - accuracyTime > ACCURACY_MS)) {
      accuracyAt = done;
      accuracyTime = now;
      getJson(`/api/tournaments/${encodeURIComponent(id)}/analysis`).then((answer) => {
        const changed = JSON.stringify(answer) !== JSON.stringify(accuracy);
        accuracy = answer;
        if (changed) replace(main, renderTournament(tournament, accuracy));
      }).catch(() => {});
    }
  }

  function load() {
    return getJson(`/api/tournaments/${encodeURIComponent(id)}`).then(show).catch((error) => {
      replace(main, h("section", { class: "tournament" }, h("h1", { text: "Tournament" }),
        h("p", { class: "empty", text: error.status === 404 ? "No such tournament." : error.message }),
        h("p", {}, h("a", { href: "#/tournaments", text: "All tournaments" }))));
    });
  }

  function startPolling() {
    if (!poll) poll = setInterval(load, POLL_MS);
  }

  replace(main, h("section", { class: "tournament" }, h("h1", { text: "Tournament" }), h("p", { text: "Loading…" })));
  load();
  if (session.loggedIn) {
    stops.push(session.on("tournament", (msg) => {
      if (msg.tournament && String(msg.tournament.id) === String(id)) show(msg.tournament);
    }));
    session.request({ type: "watch_tournament", tournament: id, on: true }).catch(startPolling);
  } else {
    startPolling();
  }
  return () => {
    clearInterval(poll);
    clearInterval(countdown);
    for (const stop of stops) stop();
    if (session.loggedIn && !poll) session.request({ type: "watch_tournament", tournament: id, on: false }).catch(() => {});
  };
}
