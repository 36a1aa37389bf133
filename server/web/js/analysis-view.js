// @ts-check
/**
 * The analysis of a recorded game, in its replay (docs/ANALYSIS.md): an evaluation graph (`graph`, which the
 * replay puts under the board)
 * (click a point to go to that position), blunders, mistakes and inaccuracies marked in the move list, the
 * engine's best move shown on the board and in words, and each player's accuracy. A game not analysed yet
 * gets an "Analyse this game" button, and the progress while the server's worker analyses it.
 */

import { getJson } from "./api.js";
import { h, replace } from "./dom.js";

const MARKS = { blunder: "??", mistake: "?", inaccuracy: "?!" };
const POLL_MS = 1000;
const SVG = "http://www.w3.org/2000/svg";
const WIDTH = 600;
const HEIGHT = 120;

/**
 * A value in words: "win in 7", "draw", "loss in 4" when exact, else the expected score in percent.
 * @param {number} value  expected score 0..1
 * @param {string | null} outcome
 * @param {number | null} plies
 */
export function describeValue(value, outcome, plies) {
  if (outcome === "draw") return "draw";
  if (outcome) return plies ? `${outcome} in ${plies}` : outcome;
  return `${Math.round(value * 100)}%`;
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
   *          positions: any[]}} hooks
   */
  constructor(record, game, hooks) {
    this.record = record;
    this.game = game;
    this.hooks = hooks;
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
    this.graph = h("div", { class: "eval-graph" });
    this.best = h("p", { class: "best-move", "aria-live": "polite" });
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

  progress(answer) {
    const text = answer.status === "queued"
      ? `Waiting for the analysis to start${answer.ahead ? ` (${answer.ahead} game${answer.ahead === 1 ? "" : "s"} first)` : ""}…`
      : `Analysing… position ${answer.done} of ${answer.total || "?"}`;
    replace(this.body, h("p", { class: "analysing", role: "status" }, h("span", { class: "spinner", "aria-hidden": "true" }), text));
    this.timer = setTimeout(() => this.load(false), POLL_MS);
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
    replace(this.body, this.best, summary,
      h("p", { class: "muted small", text: `Master engine, ${analysis.nodes.toLocaleString("en")} nodes a position; exact values where it can prove them.` }));
    const buttons = this.hooks.moveButtons();
    analysis.moves.forEach((verdict, i) => {
      const button = buttons[i];
      if (!button) return;
      button.classList.add(`label-${verdict.label}`);
      const mark = MARKS[verdict.label];
      if (mark && !button.querySelector(".label-mark")) button.append(h("span", { class: "label-mark", text: mark }));
      button.title = `${verdict.label}${verdict.only ? " (only move)" : ""}: ${describeValue(verdict.before, verdict.outcome_before, verdict.plies_before)} → ${describeValue(verdict.after, verdict.outcome_after, verdict.plies_after)}${verdict.best && verdict.best !== verdict.move ? `; best ${verdict.best}` : ""}`;
    });
    this.show(this.at);
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
    const x = (i) => (count > 1 ? (i / (count - 1)) * WIDTH : 0);
    const y = (value) => HEIGHT - value * HEIGHT;
    const chart = svg("svg", { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, class: "eval", role: "img", preserveAspectRatio: "none",
      "aria-label": `Evaluation graph: ${this.record.players[0]}'s expected score after each move; click to go there` });
    const points = this.analysis.positions.map((_, i) => `${x(i)},${y(this.firstSeatValue(i))}`);
    chart.append(svg("polygon", { class: "area", points: `0,${HEIGHT} ${points.join(" ")} ${WIDTH},${HEIGHT}` }));
    chart.append(svg("line", { class: "middle", x1: 0, x2: WIDTH, y1: HEIGHT / 2, y2: HEIGHT / 2 }));
    chart.append(svg("polyline", { class: "curve", points: points.join(" ") }));
    this.analysis.moves.forEach((verdict, i) => {
      if (!MARKS[verdict.label]) return;
      const dot = svg("circle", { class: `dot label-${verdict.label}`, cx: x(i + 1), cy: y(this.firstSeatValue(i + 1)), r: 4 });
      dot.append(svg("title"));
      dot.firstChild.textContent = `${verdict.ply}. ${verdict.move}: ${verdict.label}`;
      chart.append(dot);
    });
    this.cursor = svg("line", { class: "cursor", y1: 0, y2: HEIGHT });
    chart.append(this.cursor);
    chart.addEventListener("click", (event) => {
      const box = chart.getBoundingClientRect();
      const ply = Math.round(((event.clientX - box.left) / box.width) * (count - 1));
      this.hooks.goTo(Math.max(0, Math.min(count - 1, ply)));
    });
    this.xOf = x;
    replace(this.graph, chart);
  }

  /** Follow the replay to position `at`: the graph's cursor, and the engine's best move there. */
  show(at) {
    this.at = at;
    if (!this.analysis || !this.cursor) return;
    const position = this.analysis.positions[at];
    this.cursor.setAttribute("x1", String(this.xOf(at)));
    this.cursor.setAttribute("x2", String(this.xOf(at)));
    if (!position || !position.best) {
      this.best.textContent = position ? `Game over (${describeValue(position.value, position.outcome, position.plies)} for the side to move).` : "";
      this.hooks.showBest([]);
      return;
    }
    this.best.textContent = `Engine's best here: ${position.best} (${describeValue(position.value, position.outcome, position.plies)}${position.exact ? ", exact" : ""})`;
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
