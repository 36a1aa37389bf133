// @ts-check
/**
 * The analysis of a recorded game, in its replay (docs/ANALYSIS.md): an evaluation graph for the first player, with
 * its axes and a legend (click a point to go to that position), blunders, mistakes and inaccuracies marked in the move list, the
 * engine's best move shown on the board and in words, what the move just played did and the better move (in words,
 * not only in a tooltip: touch screens have none), every value said from a named side, and each player's accuracy. A game not analysed yet
 * gets an "Analyse this game" button, and the progress while the server's worker analyses it.
 */

import { getJson } from "./api.js";
import { h, replace } from "./dom.js";
import { resultText } from "./format.js";
import { showMove } from "./games/common.js";
import { fitRows } from "./room-log.js";

const MARKS = { blunder: "??", mistake: "?", inaccuracy: "?!" };
const POLL_MS = 1000;
const SVG = "http://www.w3.org/2000/svg";
const WIDTH = 600;
const HEIGHT = 120;
const X_PAD = 14; // the graph's margins (in its own units), so that no dot at an end or edge is cut
const Y_PAD = 9;
const WORDS = { blunder: "a blunder", mistake: "a mistake", inaccuracy: "an inaccuracy", best: "the best move",
  good: "a good move", only: "the only move that keeps the result" };

/**
 * A value said from a named side, never "win" without whose: "ann (red) wins in 31", "a draw", or the first player's
 * expected score, "ann (red) 62%" (the side the graph is drawn for).
 * @param {string[]} names  each seat's name as people read it ("ann (red)")
 * @param {number} seat  the seat the value is for
 * @param {number} value  expected score 0..1 for `seat`
 * @param {string | null} outcome  "win", "loss" or "draw" for `seat` when exact
 * @param {number | null} plies
 */
export function valueFor(names, seat, value, outcome, plies) {
  const within = plies ? ` in ${plies}` : "";
  if (outcome === "draw") return "a draw";
  if (outcome === "win") return `${names[seat]} wins${within}`;
  if (outcome === "loss") return `${names[1 - seat]} wins${within}`;
  return `${names[0]} ${Math.round((seat === 0 ? value : 1 - value) * 100)}%`;
}

/**
 * How a game that the rules ended came out, from a named side: "ann (red) has won", "the game is drawn".
 * @param {string[]} names  each seat's name as people read it
 * @param {number} seat  the seat `outcome` is for
 * @param {string | null} outcome  "win", "loss" or "draw" for `seat`
 */
export function endFor(names, seat, outcome) {
  if (outcome === "draw") return "the game is drawn";
  return `${names[outcome === "loss" ? 1 - seat : seat]} has won`;
}

/** An SVG element with attributes. */
function svg(name, attributes = {}) {
  const element = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, String(value));
  return element;
}

export class AnalysisView {
  /**
   * @param {any} record   the recorded game (/api/games/ID)
   * @param {import("./games/common.js").AnyGame} game
   * @param {{goTo: (ply: number) => void, moveButtons: () => HTMLElement[], showBest: (squares: string[]) => void,
   *          positions: any[], coords: import("./coords.js").Coords}} hooks
   */
  constructor(record, game, hooks) {
    this.record = record;
    this.game = game;
    this.hooks = hooks;
    /** each seat as the analysis names it: "ann (red)" */
    this.names = record.players.map((name, seat) => (game.seats[seat] ? `${name} (${game.seats[seat].toLowerCase()})` : name));
    /** @type {any} */
    this.analysis = null;
    /** @type {any} */
    this.timer = null;
    this.at = 0;
    this.closed = false; // set when the replay is left: nothing more is fetched or drawn
    /** @type {(ply: number) => number} the graph's x of a position */
    this.xOf = () => 0;
    /** @type {Element | null} the graph's line at the position shown */
    this.cursor = null;
    this.body = h("div", { class: "analysis-body" }, h("p", { class: "muted", text: "Looking for an analysis…" }));
    this.element = h("section", { class: "panel analysis", "aria-label": "Analysis" }, h("h2", { text: "Analysis" }), this.body);
    // each player's figures, in a panel of their own that the replay puts after its moves (the graph, the best move
    // and the moves are what a reader steps through, so they come first)
    this.figures = h("section", { class: "panel analysis-figures", "aria-label": "Accuracy", hidden: true });
    this.graph = h("figure", { class: "eval-graph" });
    this.best = h("p", { class: "best-move", "aria-live": "polite" });
    this.verdict = h("p", { class: "verdict-line", "aria-live": "polite" }); // the move just played, and a better one
    this.load(false);
  }

  /** Ask the server for the analysis (`request`: have it made if there is none). */
  load(request) {
    clearTimeout(this.timer);
    if (this.closed) return;
    if (!this.record.moves.length) {
      replace(this.body, h("p", { class: "muted", text: "No moves were played: there is nothing to analyse." }));
      return;
    }
    if (this.record.ended_at === null) {
      replace(this.body, h("p", { class: "muted", text: "The game is still being played: it can be analysed once it has ended." }));
      return;
    }
    const path = `/api/games/${encodeURIComponent(this.record.id)}/analysis${request ? "?request=1" : ""}`;
    getJson(path).then((answer) => {
      if (this.closed) return; // the replay was left while the answer was on its way
      if (answer.status === "done") this.render(answer.analysis);
      else if (answer.status === "none") this.offer();
      else this.progress(answer);
    }).catch((error) => {
      if (this.closed) return;
      replace(this.body, h("p", { class: "notice error", text: error.message }),
        h("button", { type: "button", text: "Try again", onclick: () => this.load(true) }));
    });
  }

  offer() {
    replace(this.body, h("p", { class: "muted", text: "Not analysed yet. The master engine can give its verdict on every move." }),
      h("button", { type: "button", class: "primary analyse", text: "Analyse this game", onclick: () => this.load(true) }));
  }

  /** Say how the analysis is getting on; while it waits, ask for it again: the server puts the game being watched
   * first in this address's line, ahead of the games it analyses by itself. */
  progress(answer) {
    const queued = answer.status === "queued";
    let text = `Waiting for the analysis to start${answer.ahead ? ` (${answer.ahead} game${answer.ahead === 1 ? "" : "s"} first)` : ""}…`;
    if (!queued) text = answer.total ? `Analysing… position ${Math.min(answer.done + 1, answer.total)} of ${answer.total}` : "Analysing… starting the engine";
    replace(this.body, h("p", { class: "analysing", role: "status" }, h("span", { class: "spinner", "aria-hidden": "true" }), text));
    this.timer = setTimeout(() => this.load(queued), POLL_MS);
  }

  /** Draw the analysis: the graph, the marks in the move list, each player's figures. */
  render(analysis) {
    this.analysis = analysis;
    const players = this.record.players;
    const summary = h("table", { class: "accuracy" },
      h("thead", {}, h("tr", {}, [["", ""], ["Accuracy", "accuracy"], ["??", "blunders"], ["?", "mistakes"], ["?!", "inaccuracies"]]
        .map(([text, title]) => h("th", { scope: "col", text, title, "aria-label": title || undefined })))),
      h("tbody", {}, [0, 1].map((seat) => {
        const s = analysis.summary[String(seat)];
        return h("tr", { "data-seat": seat }, h("th", { scope: "row", text: players[seat] }),
          h("td", { class: "num", text: s.accuracy === null ? "–" : `${s.accuracy}%` }),
          h("td", { class: "num", text: String(s.blunders) }), h("td", { class: "num", text: String(s.mistakes) }),
          h("td", { class: "num", text: String(s.inaccuracies) }));
      })));
    this.drawGraph();
    replace(this.body, this.graph, this.best, this.verdict);
    replace(this.figures, h("h2", { text: "Accuracy" }), summary,
      h("p", { class: "muted small", text: `Master engine, ${analysis.method || `${analysis.nodes.toLocaleString("en")} nodes a position`}; exact values where it can prove them.` }));
    this.figures.hidden = false;
    const buttons = this.hooks.moveButtons();
    analysis.moves.forEach((verdict, i) => {
      const button = buttons[i];
      if (!button) return;
      button.classList.add(`label-${verdict.label}`);
      const mark = MARKS[verdict.label];
      if (mark && !button.querySelector(".label-mark")) button.append(h("span", { class: "label-mark", text: mark }));
      button.title = this.verdictText(verdict);
    });
    const list = buttons.length ? buttons[0].closest("ol") : null;
    if (list) fitRows(/** @type {HTMLElement} */ (list)); // the marks may make a move too long for two columns
    this.hooks.goTo(this.at); // which shows it, and brings the move shown back into view in the refitted list
  }

  /** A move as the replay shows it (the player's convention). */
  move(notation) {
    return showMove(this.game, notation, this.hooks.coords);
  }

  /**
   * What the engine says of a move, from named sides: "12. 3?? by ann (red), a blunder: ann (red) wins in 9 → bob
   * (yellow) wins in 20. Better: 4 (ann (red) wins in 9)."
   * @param {any} verdict  one of the analysis' moves
   */
  verdictText(verdict) {
    const names = this.names;
    const before = valueFor(names, verdict.seat, verdict.before, verdict.outcome_before, verdict.plies_before);
    const kind = WORDS[verdict.label] || verdict.label;
    let change;
    if (this.over(verdict.ply)) {
      // the move ended the game: say how it ended, never "still ann (red) wins in 1" (that was before the move)
      const end = endFor(names, verdict.seat, verdict.outcome_after);
      change = verdict.outcome_before === verdict.outcome_after ? end : `${before} → ${end}`;
    } else {
      // the distance after the move counted from the position after it, as the line above says it (the analysis
      // counts both from before the move, the mover's turn: "wins in 40" over a line that said "wins in 39")
      const plies = verdict.plies_after ? verdict.plies_after - 1 : verdict.plies_after;
      const after = valueFor(names, verdict.seat, verdict.after, verdict.outcome_after, plies);
      const kept = verdict.outcome_before
        ? verdict.outcome_before === verdict.outcome_after && verdict.plies_before === verdict.plies_after
        : before === after;
      change = kept ? `still ${after}` : `${before} → ${after}`;
    }
    let text = `${verdict.ply}. ${this.move(verdict.move)}${MARKS[verdict.label] || ""} by ${names[verdict.seat]}, ${kind}`
      + `${verdict.only ? " (the only move that keeps the result)" : ""}: ${change}.`;
    // a better move only where the one played lost something: a best or good move the engine would have played
    // differently (an equal choice) has none, or the line would read "the best move … Better: 3"
    if (MARKS[verdict.label] && verdict.best && verdict.best !== verdict.move) {
      text += ` Better: ${this.move(verdict.best)} (${before}).`;
    }
    return text;
  }

  /** Whether the rules ended the game at position `i` (the engine has no move there: none is left to play). */
  over(i) {
    const position = this.analysis.positions[i];
    return Boolean(position) && !position.best;
  }

  /** The first seat's expected score at position `i`. */
  firstSeatValue(i) {
    const positions = this.analysis.positions;
    const moves = this.analysis.moves;
    const toMove = i < moves.length ? moves[i].seat : 1 - moves[moves.length - 1].seat;
    return toMove === 0 ? positions[i].value : 1 - positions[i].value;
  }

  drawGraph() {
    const count = this.analysis.positions.length;
    const x = (i) => X_PAD + (count > 1 ? (i / (count - 1)) * (WIDTH - 2 * X_PAD) : 0);
    const y = (value) => Y_PAD + (1 - value) * (HEIGHT - 2 * Y_PAD);
    const [first, second] = this.names;
    const chart = svg("svg", { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, class: "eval", role: "img", preserveAspectRatio: "none",
      "aria-label": `Evaluation graph: ${first}'s expected score after each move, from 100% (${first} wins) at the top to `
        + `0% (${second} wins) at the bottom; click to go there` });
    const points = this.analysis.positions.map((_, i) => `${x(i)},${y(this.firstSeatValue(i))}`);
    chart.append(svg("polygon", { class: "area", points: `${x(0)},${y(0)} ${points.join(" ")} ${x(count - 1)},${y(0)}` }));
    chart.append(svg("line", { class: "middle", x1: 0, x2: WIDTH, y1: y(0.5), y2: y(0.5) }));
    chart.append(svg("polyline", { class: "curve", points: points.join(" ") }));
    this.analysis.moves.forEach((verdict, i) => {
      if (!MARKS[verdict.label]) return;
      // a dot is a round-capped line of no length: round on any screen, though the graph is stretched to its box
      const cx = x(i + 1);
      const cy = y(this.firstSeatValue(i + 1));
      const dot = svg("line", { class: `dot label-${verdict.label}`, x1: cx, x2: cx, y1: cy, y2: cy });
      dot.append(svg("title"));
      /** @type {Element} */ (dot.firstChild).textContent = this.verdictText(verdict);
      chart.append(dot);
    });
    this.cursor = svg("line", { class: "cursor", y1: 0, y2: HEIGHT });
    chart.append(this.cursor);
    chart.addEventListener("click", (event) => {
      const box = chart.getBoundingClientRect();
      const along = ((event.clientX - box.left) / box.width) * WIDTH;
      const ply = Math.round(((along - X_PAD) / (WIDTH - 2 * X_PAD)) * (count - 1));
      this.hooks.goTo(Math.max(0, Math.min(count - 1, ply)));
    });
    this.xOf = x;
    const chip = (label) => h("span", { class: `chip label-${label}`, "aria-hidden": "true" });
    replace(this.graph,
      h("div", { class: "eval-frame" },
        h("div", { class: "y-axis", "aria-hidden": "true" },
          h("span", { text: "100%" }), h("span", { text: "50%" }), h("span", { text: "0%" })),
        chart,
        h("div", { class: "x-axis", "aria-hidden": "true" },
          h("span", { text: "start" }), h("span", { text: "move" }), h("span", { text: `${count - 1}` }))),
      h("figcaption", { class: "legend" },
        h("span", {}, h("span", { class: "chip area", "aria-hidden": "true" }),
          `${first}'s expected score (top: ${first} wins; bottom: ${second} wins; dashed: even)`),
        h("span", {}, chip("blunder"), "?? blunder"), h("span", {}, chip("mistake"), "? mistake"),
        h("span", {}, chip("inaccuracy"), "?! inaccuracy")));
  }

  /** Follow the replay to position `at`: the graph's cursor, the move just played, and the engine's best move. */
  show(at) {
    this.at = at;
    if (!this.analysis || !this.cursor) return;
    const position = this.analysis.positions[at];
    const moves = this.analysis.moves;
    this.cursor.setAttribute("x1", String(this.xOf(at)));
    this.cursor.setAttribute("x2", String(this.xOf(at)));
    this.verdict.textContent = at > 0 && moves[at - 1] ? this.verdictText(moves[at - 1]) : "";
    const toMove = at < moves.length ? moves[at].seat : 1 - moves[moves.length - 1].seat;
    if (!position || !position.best) {
      const end = position && position.outcome === "draw" ? "a draw" : position && endFor(this.names, toMove, position.outcome);
      this.best.textContent = position ? `Game over: ${end}.` : "";
      this.hooks.showBest([]);
      return;
    }
    const value = valueFor(this.names, toMove, position.value, position.outcome, position.plies);
    const engine = `${this.move(position.best)} (${value}${position.exact ? ", exact" : ""})`;
    // a game that ended off the rules (a resignation, a clock, a forfeit) has no one to move at its last position
    this.best.textContent = at === moves.length && this.record.ended_at !== null
      ? `Game over: ${resultText(this.record, this.record.players)}. Engine's best here was ${engine}.`
      : `${this.names[toMove]} to move. Engine's best here: ${engine}`;
    let squares = [];
    try {
      squares = this.game.apply(this.hooks.positions[at], position.best).marks || [];
    } catch {
      squares = []; // a move the page cannot follow: the words say it
    }
    this.hooks.showBest(squares);
  }

  close() {
    this.closed = true;
    clearTimeout(this.timer);
  }
}
