// @ts-check
/**
 * Replays of recorded games: the list (#/replay, filtered by game and player) and one game
 * (#/replay/ID/N): step forward and back, jump to a move, autoplay; the address always
 * names the move shown, so it can be shared.
 */

import { AnalysisView } from "./analysis-view.js";
import { getJson, query } from "./api.js";
import { BoardView } from "./board.js";
import { drawInto, field, h, replace, scrollWithin } from "./dom.js";
import { formatClock, formatDate, resultText, wholeNumber } from "./format.js";
import { showMove } from "./games/common.js";
import { GAMES, gameOf } from "./games/index.js";
import { fitRows, moveItem, refitOnResize } from "./room-log.js";
import { loadPreferences, savePreference } from "./storage.js";

const PAGE = 25;
const icon = (path) => `<svg viewBox="0 0 20 20" aria-hidden="true" focusable="false"><path d="${path}"/></svg>`;
const ICONS = {
  first: icon("M4 4h2v12H4zM16 4v12L7 10z"),
  back: icon("M14 4v12L5 10z"),
  forward: icon("M6 4v12l9-6z"),
  last: icon("M14 4h2v12h-2zM4 4v12l9-6z"),
  play: icon("M6 4v12l9-6z"),
  pause: icon("M5 4h3.5v12H5zM11.5 4H15v12h-3.5z"),
};

function iconButton(label, markup, onclick) {
  const button = h("button", { type: "button", class: "icon", "aria-label": label, title: label, onclick });
  drawInto(button, markup);
  return button;
}
const SPEEDS = [[0.5, "fast"], [1, "1 s a move"], [2, "2 s a move"]];

function gameResult(record) {
  if (record.ended_at === null) return "being played";
  return resultText({ winner: record.winner, reason: record.reason, status: record.status }, record.players);
}

/** The list of recorded games; `params`: game, player, offset from the address. */
export function mountReplayList(main, params, app) {
  const games = Object.values(GAMES);
  const gameSelect = h("select", { name: "game" }, h("option", { value: "", text: "all games" }),
    games.map((game) => h("option", { value: game.id, text: game.title, selected: params.get("game") === game.id })));
  const player = h("input", { name: "player", value: params.get("player") || "", maxlength: "32", autocomplete: "off" });
  const offset = Math.max(0, wholeNumber(params.get("offset")));
  const list = h("div", { class: "table-wrap" }, h("p", { text: "Loading…" }));
  const pager = h("nav", { class: "pager", "aria-label": "Pages" });

  function go(newOffset) {
    app.navigate(`#/replay${query({ game: gameSelect.value, player: player.value.trim(), offset: newOffset || "" })}`);
  }

  replace(main, h("section", { class: "replays" },
    h("h1", { text: "Recorded games" }),
    h("form", { class: "filters", onsubmit: (event) => { event.preventDefault(); go(0); } },
      field("Game", gameSelect),
      field("Player", player),
      h("button", { type: "submit", text: "Show" })),
    list, pager));

  getJson(`/api/games${query({ limit: PAGE, offset, game: params.get("game"), player: params.get("player") })}`).then((answer) => {
    if (!answer.games.length) {
      const filtered = params.get("game") || params.get("player");
      replace(list, h("p", { class: "empty", text: offset ? "No more games." : filtered
        ? "No recorded games match these filters." : "No recorded games yet." }));
    } else {
      replace(list, h("table", { class: "games" },
        h("thead", {}, h("tr", {}, ["Ended", "Game", "Players", "Result", "Length", ""].map((text) => h("th", { scope: "col", text })))),
        h("tbody", {}, answer.games.map((record) => h("tr", {},
          h("td", { class: "date", text: formatDate(record.ended_at || record.started_at) }),
          h("td", { class: "game", text: GAMES[record.game] ? GAMES[record.game].title : record.game }),
          h("td", { class: "players" }, h("a", { href: `#/replay/${encodeURIComponent(record.id)}` },
            record.players.map((name, seat) => [seat ? " vs " : "", record.winner === seat ? h("strong", { class: "won", title: "won", text: name }) : name]))),
          h("td", { class: "outcome", text: gameResult(record) }),
          h("td", { class: "num", text: `${record.move_count} moves` }),
          h("td", { class: "open" }, h("a", { href: `#/replay/${encodeURIComponent(record.id)}`, text: "Replay" }),
            record.analysed ? h("span", { class: "analysed", title: "the master engines' analysis is ready", text: " · analysed" }) : null))))));
    }
    replace(pager,
      offset > 0 ? h("button", { type: "button", text: "Newer", onclick: () => go(Math.max(0, offset - PAGE)) }) : null,
      answer.games.length === PAGE ? h("button", { type: "button", text: "Older", onclick: () => go(offset + PAGE) }) : null);
  }).catch((error) => replace(list, h("p", { class: "notice error", text: error.message })));
  return () => {};
}

/** One recorded game at move `start`. */
export function mountReplay(main, id, start, app) {
  /** @type {any} */
  let timer = null; // setInterval's id while autoplaying
  let cleanup = () => {};
  replace(main, h("section", { class: "replay" }, h("h1", { text: "Replay" }), h("p", { text: "Loading…" })));

  getJson(`/api/games/${encodeURIComponent(id)}`).then((record) => {
    cleanup = show(record);
  }).catch((error) => {
    replace(main, h("section", { class: "replay" }, h("h1", { text: "Replay" }),
      h("p", { class: "notice error", text: error.status === 404 ? `There is no recorded game ${id}.` : error.message }),
      h("p", {}, h("a", { href: "#/replay", text: "All recorded games" }))));
  });

  function show(record) {
    const game = gameOf(record.game);
    const coords = app.coords();
    const positions = [game.initial(record.options)];
    for (const move of record.moves) {
      try {
        positions.push(game.apply(positions[positions.length - 1], move.move));
      } catch {
        break; // a record the page cannot follow: show what it can
      }
    }
    const last = positions.length - 1;
    let at = Math.min(Math.max(0, start), last);
    const board = new BoardView(game, coords, { label: `${game.title} board, replay` });
    const where = h("p", { class: "where", "aria-live": "polite" });
    const clocks = h("p", { class: "replay-clocks" });
    const slider = h("input", { type: "range", min: "0", max: String(last), value: String(at), "aria-label": "Move" });
    const playButton = h("button", { type: "button", class: "primary play-button", "aria-label": "Autoplay", "aria-pressed": "false" });
    const speed = h("select", { name: "speed", "aria-label": "Autoplay speed" },
      SPEEDS.map(([seconds, text]) => h("option", { value: seconds, text, selected: seconds === (loadPreferences().autoplaySeconds || 1) })));
    const moveList = h("ol", { class: `moves replay-moves${game.moveText ? " in-words" : ""}`, "aria-label": "Moves" },
      record.moves.slice(0, last).map((move, i) => moveItem(game, move.move, coords, i + 1, () => goTo(i + 1))));
    const link = h("a", { class: "move-link" });
    const analysis = new AnalysisView(record, game, {
      goTo: (n) => goTo(n), positions, showBest: (squares) => board.showBest(squares), coords,
      moveButtons: () => [...moveList.querySelectorAll("button.move")],
    });
    const turnable = game.topSeat !== undefined;
    const flip = h("button", { type: "button", class: "small flip", hidden: !turnable, "aria-pressed": "false",
      text: "Flip the board", onclick: () => {
        board.setFlipped(!board.flipped);
        flip.setAttribute("aria-pressed", String(board.flipped));
      } });

    function goTo(n) {
      at = Math.min(Math.max(0, n), last);
      board.update(positions[at]);
      slider.value = String(at);
      where.textContent = at === 0 ? `Start position · ${last} moves` : `Move ${at} of ${last}: ${showMove(game, record.moves[at - 1].move, coords)}`;
      const after = at > 0 ? record.moves[at - 1].clocks_after : null;
      clocks.textContent = after ? record.players.map((name, seat) => `${name} ${formatClock(after[seat])}`).join(" · ") : "";
      moveList.querySelectorAll("button.move").forEach((button, i) => {
        const current = i + 1 === at;
        button.classList.toggle("current", current);
        if (current) button.setAttribute("aria-current", "step");
        else button.removeAttribute("aria-current");
      });
      const current = moveList.querySelector("button.current");
      if (current) scrollWithin(moveList, /** @type {Element} */ (current.parentElement));
      const hash = `#/replay/${encodeURIComponent(record.id)}/${at}`;
      link.href = hash;
      link.textContent = `Link to this position (move ${at})`;
      if (window.location.hash !== hash) history.replaceState(null, "", hash);
      analysis.show(at);
      if (at === last) stop();
    }

    function stop() {
      clearInterval(timer);
      timer = null;
      drawInto(playButton, ICONS.play + "<span>Play</span>");
      playButton.setAttribute("aria-pressed", "false");
    }

    function toggle() {
      if (timer) {
        stop();
        return;
      }
      if (at === last) goTo(0);
      drawInto(playButton, ICONS.pause + "<span>Pause</span>");
      playButton.setAttribute("aria-pressed", "true");
      timer = setInterval(() => goTo(at + 1), Number(speed.value) * 1000);
    }

    speed.addEventListener("change", () => {
      savePreference("autoplaySeconds", Number(speed.value));
      if (timer) {
        stop();
        toggle();
      }
    });
    slider.addEventListener("input", () => goTo(Number(slider.value)));

    function key(event) {
      if (event.target.closest("input, select, textarea, .board")) return;
      const actions = { ArrowLeft: () => goTo(at - 1), ArrowRight: () => goTo(at + 1), Home: () => goTo(0), End: () => goTo(last) };
      if (actions[event.key]) {
        event.preventDefault();
        actions[event.key]();
      }
    }

    const players = record.players.map((name, seat) => (game.seats[seat] ? `${name} (${game.seats[seat].toLowerCase()})` : name)).join(" vs ");
    replace(main, h("section", { class: "replay" },
      h("header", { class: "room-head" },
        h("h1", { text: `${game.title}: ${record.players.join(" vs ")}` }),
        h("p", { class: "meta", text: `${players} · ${formatDate(record.started_at)} · ${gameResult(record)}${record.room ? ` · room ${record.room}` : ""}` }),
        h("p", { class: "room-tools" }, h("a", { class: "rules-link", href: `#/rules/${game.id}`, text: `Rules of ${game.title}` }), flip)),
      h("div", { class: "room-body" },
        h("div", { class: "play" }, board.element, where, clocks,
          h("div", { class: "replay-controls", role: "group", "aria-label": "Replay controls" },
            iconButton("First position", ICONS.first, () => goTo(0)),
            iconButton("Back one move", ICONS.back, () => goTo(at - 1)),
            playButton,
            iconButton("Forward one move", ICONS.forward, () => goTo(at + 1)),
            iconButton("Last position", ICONS.last, () => goTo(last)),
            speed),
          slider),
        h("aside", { class: "side" },
          h("section", { class: "panel moves-panel" }, h("h2", { text: "Moves" }), moveList),
          analysis.element, analysis.figures,
          h("section", { class: "panel links" }, link, h("a", { href: "#/replay", text: "All recorded games" }))))));
    playButton.addEventListener("click", toggle);
    stop();
    window.scrollTo(0, 0); // a replay opens at its top, with the board in view
    fitRows(moveList);
    goTo(at);
    const unfit = refitOnResize(moveList, () => moveList.querySelector("button.current")?.parentElement ?? null);
    document.addEventListener("keydown", key); // last: a replay that failed to show leaves no handler behind
    return () => {
      unfit();
      document.removeEventListener("keydown", key);
      analysis.close();
    };
  }

  return () => {
    clearInterval(timer);
    cleanup();
  };
}
