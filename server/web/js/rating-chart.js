// @ts-check
/**
 * A player's rating over its rated games, as an SVG drawing: the rating after each game as a line with a
 * dot per game (its title says the game, the opponent and the change), the band of ± one deviation around it
 * once the rating has settled (a provisional rating's ± of 110 to 350 would fill the chart and hide the line:
 * the figures above the chart say it), and the dates of the first and last games under it. Built from numbers
 * only; every text goes in as text.
 */

import { formatDate } from "./format.js";

/** The deviation up to which a rating is settled (docs/RATINGS.md): its band is drawn. */
const SETTLED = 110;

const SVG = "http://www.w3.org/2000/svg";
const WIDTH = 640;
const HEIGHT = 220;
const PAD = { left: 46, right: 12, top: 12, bottom: 30 };

/**
 * One rated game of a player's history (/api/players/NAME).
 * @typedef {{seq: number, id: string, game: string, opponent: string, seat: number, score: number,
 *   weight: number, played_at: number, rating: number, deviation: number, change: number}} RatedGame
 */

/**
 * An SVG element with attributes and children (elements, or strings as text).
 * @param {string} tag
 * @param {Record<string, string | number>} attrs
 * @param {...(Element | string)} children
 * @returns {SVGElement}
 */
function svg(tag, attrs = {}, ...children) {
  const el = /** @type {SVGElement} */ (document.createElementNS(SVG, tag));
  for (const [key, value] of Object.entries(attrs)) el.setAttribute(key, String(value));
  for (const child of children) el.append(child);
  return el;
}

/** A rounded step for the axis labels: 50, 100, 200, 250 or 500 rating points. */
function step(span) {
  for (const candidate of [50, 100, 200, 250, 500]) if (span / candidate <= 5) return candidate;
  return 1000;
}

/** "won", "drew" or "lost" from a score. */
export function outcomeWord(score) {
  return score === 1 ? "won" : score === 0 ? "lost" : "drew";
}

/** A change of rating as people write it: "+12.3", "−4.0", "±0". */
export function formatChange(change) {
  if (!change) return "±0";
  return `${change > 0 ? "+" : "−"}${Math.abs(change).toFixed(1)}`;
}

/**
 * The chart of `history` (oldest first, not empty), starting from the rating before its first game (a newcomer's
 * 1500, an anchor's pinned rating, or where the games shown start when `whole` is false: older ones are left out).
 * @param {RatedGame[]} history
 * @param {string} caption what the drawing shows, for screen readers
 * @param {boolean} whole whether `history` holds every rated game, from the first
 * @returns {SVGElement}
 */
export function ratingChart(history, caption, whole = true) {
  const first = history[0];
  const start = { rating: first.rating - first.change, deviation: whole ? 350 : first.deviation,
    label: whole ? "before the first rated game" : "before the earliest game shown" };
  const points = [start, ...history.map((game, i) => ({
    rating: game.rating,
    deviation: game.deviation,
    label: `game ${i + 1}: ${outcomeWord(game.score)} against ${game.opponent}, ${formatChange(game.change)} to ${Math.round(game.rating)}`,
  }))];
  const band = (p) => (p.deviation <= SETTLED ? p.deviation : 0);
  const low = Math.min(...points.map((p) => p.rating - band(p))) - 25;
  const high = Math.max(...points.map((p) => p.rating + band(p))) + 25;
  const unit = step(high - low);
  const bottom = Math.floor(low / unit) * unit;
  const top = Math.max(bottom + unit, Math.ceil(high / unit) * unit);
  const x = (i) => PAD.left + (points.length === 1 ? 0 : (i * (WIDTH - PAD.left - PAD.right)) / (points.length - 1));
  const y = (rating) => PAD.top + ((top - rating) * (HEIGHT - PAD.top - PAD.bottom)) / (top - bottom);
  const clamp = (rating) => Math.max(bottom, Math.min(top, rating));
  const chart = svg("svg", { class: "rating-chart", viewBox: `0 0 ${WIDTH} ${HEIGHT}`, role: "img", "aria-label": caption },
    svg("title", {}, caption));
  for (let value = bottom; value <= top; value += unit) {
    chart.append(svg("line", { class: "grid", x1: PAD.left, x2: WIDTH - PAD.right, y1: y(value), y2: y(value) }),
      svg("text", { class: "axis", x: PAD.left - 6, y: y(value) + 4, "text-anchor": "end" }, String(value)));
  }
  const last = history[history.length - 1];
  chart.append(svg("text", { class: "axis date", x: x(1), y: HEIGHT - 8, "text-anchor": points.length > 2 ? "start" : "end" },
    formatDate(history[0].played_at)));
  if (history.length > 1) {
    chart.append(svg("text", { class: "axis date", x: WIDTH - PAD.right, y: HEIGHT - 8, "text-anchor": "end" },
      `${formatDate(last.played_at)} · ${history.length} rated games`));
  }
  // the band where the rating is settled: one polygon per settled stretch
  const stretches = [];
  points.forEach((p, i) => {
    if (p.deviation > SETTLED) return;
    if (i > 0 && points[i - 1].deviation <= SETTLED && stretches.length) stretches[stretches.length - 1].push(i);
    else stretches.push([i]);
  });
  for (const stretch of stretches) {
    const upper = stretch.map((i) => `${x(i)},${y(clamp(points[i].rating + points[i].deviation))}`);
    const lower = stretch.map((i) => `${x(i)},${y(clamp(points[i].rating - points[i].deviation))}`).reverse();
    chart.append(svg("polygon", { class: "band", points: [...upper, ...lower].join(" ") }));
  }
  chart.append(svg("polyline", { class: "line", points: points.map((p, i) => `${x(i)},${y(p.rating)}`).join(" ") }));
  points.forEach((p, i) => {
    if (i === 0) return;
    const won = history[i - 1].score;
    chart.append(svg("circle", { class: `dot ${outcomeWord(won)}`, cx: x(i), cy: y(p.rating), r: points.length > 60 ? 2 : 3.5 },
      svg("title", {}, p.label)));
  });
  return chart;
}
