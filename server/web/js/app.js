// @ts-check
/**
 * The page: header, connection banner and the router of hash routes.
 *
 *   #/lobby               the lobby (the default)
 *   #/room/NAME           a room: play or watch
 *   #/replay              recorded games; #/replay/ID/N one game at move N
 *   #/tournaments         tournaments; #/tournaments/ID one of them
 *   #/leaderboard         ratings by game (#/leaderboard/GAME); #/players/NAME one player's
 *   #/rules/GAME          the rules of a game, with a diagram (#/rules: the games)
 *
 * The lobby and rooms need a login; replays, tournaments and ratings do not.
 */

import { h, replace } from "./dom.js";
import { wholeNumber } from "./format.js";
import { mountLeaderboard, mountPlayer } from "./leaderboard.js";
import { identityMenu, mountLogin } from "./login.js";
import { mountLobby } from "./lobby.js";
import { mountReplay, mountReplayList } from "./replay.js";
import { mountRoom } from "./room.js";
import { RoomStore } from "./room-model.js";
import { mountRules } from "./rules.js";
import { Session } from "./session.js";
import { loadIdentity, loadPreferences } from "./storage.js";
import { mountTournament, mountTournamentList } from "./tournaments.js";

const NAV = [["#/lobby", "Lobby"], ["#/replay", "Replays"], ["#/tournaments", "Tournaments"], ["#/leaderboard", "Leaderboard"]];

const session = new Session();
const store = new RoomStore(session);
/** @param {string} selector an element index.html holds */
const element = (selector) => /** @type {HTMLElement} */ (document.querySelector(selector));
const main = element("#main");
const banner = element("#banner");
const nav = element("#nav");
const identity = element("#identity");
let unmount = () => {};
let booting = true;
let loginReason = ""; // why the login form shows, said once on it

const app = {
  session,
  store,
  /** Go to a route (a hash such as "#/room/Skaha%20Lake"). */
  navigate(hash) {
    if (window.location.hash === hash) route();
    else window.location.hash = hash;
  },
  /** Show the current route again (after logging in or out). */
  refresh() {
    route();
  },
  /** The coordinate convention to show squares in. */
  coords() {
    if (session.me) return session.me.coords;
    const stored = loadIdentity();
    return (stored && stored.coords) || loadPreferences().coords || "algebraic";
  },
};

/**
 * What every page is given: the session, the rooms the player is in, and navigation.
 * @typedef {typeof app} App
 */

/** Which view a hash names, with its parameters. */
/** A part of the address as typed: a stray "%" (a malformed escape) is kept as it is, not an error that stops the page. */
function decoded(part) {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

function parse(hash) {
  const [path, search] = hash.replace(/^#/, "").split("?");
  const parts = path.split("/").filter(Boolean).map(decoded);
  const params = new URLSearchParams(search || "");
  switch (parts[0]) {
    case "room":
      return parts[1] ? { view: "room", login: true, name: parts.slice(1).join("/") } : { view: "lobby", login: true };
    case "replay":
      return parts[1] ? { view: "replay", id: parts[1], move: wholeNumber(parts[2]) } : { view: "replays", params };
    case "tournaments":
      return parts[1] ? { view: "tournament", id: parts[1] } : { view: "tournaments" };
    case "leaderboard":
      return { view: "leaderboard", game: parts[1] || "" };
    case "players":
      return parts[1] ? { view: "player", name: parts.slice(1).join("/") } : { view: "leaderboard", game: "" };
    case "rules":
      return { view: "rules", game: parts[1] || "" };
    default:
      return { view: "lobby", login: true };
  }
}

function route() {
  unmount();
  unmount = () => {};
  const target = parse(window.location.hash);
  renderHeader(target.view, target);
  if (target.login && !session.loggedIn) {
    if (booting || session.status === "lost" || session.status === "connecting") {
      replace(main, h("p", { class: "loading", text: "Connecting…" }));
      return;
    }
    mountLogin(main, app, () => route(), loginReason);
    loginReason = "";
    return;
  }
  document.title = "Plyhall";
  switch (target.view) {
    case "room":
      unmount = mountRoom(main, target.name, app);
      break;
    case "replays":
      unmount = mountReplayList(main, target.params, app);
      break;
    case "replay":
      unmount = mountReplay(main, target.id, target.move, app);
      break;
    case "tournaments":
      unmount = mountTournamentList(main);
      break;
    case "tournament":
      unmount = mountTournament(main, target.id, app);
      break;
    case "leaderboard":
      unmount = mountLeaderboard(main, target.game);
      break;
    case "player":
      unmount = mountPlayer(main, target.name);
      break;
    case "rules":
      unmount = mountRules(main, target.game, app);
      break;
    default:
      unmount = mountLobby(main, app);
  }
}

/** The nav: the sections, and the player's own page once logged in ("My page"), the current one marked. */
function renderHeader(view, target = parse(window.location.hash)) {
  const mine = session.loggedIn ? `#/players/${encodeURIComponent(session.me.name)}` : null;
  const links = mine ? [...NAV, [mine, "My page"]] : NAV;
  const player = mine && /** @type {any} */ (target).name === session.me.name ? mine : "#/leaderboard";
  const current = { lobby: "#/lobby", room: null, replays: "#/replay", replay: "#/replay", tournaments: "#/tournaments", tournament: "#/tournaments", leaderboard: "#/leaderboard", player }[view];
  replace(nav, links.map(([href, text]) => h("a", { href, text, "aria-current": href === current ? "page" : null })));
  replace(identity, session.loggedIn ? identityMenu(app) : null);
}

let lastStatus = session.status;
let displaced = false; // another window took the session, and this one has not logged in again since
session.addEventListener("status", (event) => {
  const { status, text } = /** @type {CustomEvent} */ (event).detail;
  const was = lastStatus;
  lastStatus = status;
  const retaken = displaced && status === "out"; // "Use this window" refused (a claimed name's secret not kept)
  if (status === "replaced") displaced = true;
  else if (status === "in" || status === "out") displaced = false;
  if (retaken) loginReason = text;
  banner.hidden = !(status === "lost" || status === "replaced");
  // another window has the session: this one's board, buttons and forms are out of reach until it takes it back
  main.inert = status === "replaced";
  if (status === "lost") replace(banner, text);
  if (status === "replaced") {
    replace(banner, `${text} `, h("button", { type: "button", text: "Use this window", onclick: () => session.takeBack().catch(() => {}) }));
  }
  // logged out from a session (not a refused login, whose form says why): show the login form
  if (status === "out" && (was === "in" || was === "lost" || retaken) && !booting && parse(window.location.hash).login) route();
});

let welcomed = false;
session.addEventListener("welcome", () => {
  // after a reconnection the current view starts again from what the server resends
  if (welcomed && !booting) setTimeout(route);
  welcomed = true;
});

window.addEventListener("hashchange", route);
element(".skip").addEventListener("click", (event) => {
  event.preventDefault(); // its href would be taken for a route
  main.focus();
});

async function boot() {
  if (loadIdentity()) {
    try {
      await session.resume();
    } catch (error) {
      booting = false;
      if (parse(window.location.hash).login) {
        mountLogin(main, app, () => route(), error.message);
        renderHeader(parse(window.location.hash).view);
        return;
      }
    }
  }
  booting = false;
  route();
}

boot();
