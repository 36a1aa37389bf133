// @ts-check
/** Text for people: clocks, time controls, dates and results. */

/**
 * Seconds on a clock: "4:05", "1:02:03", or tenths under ten seconds ("7.3"). Rounded down, as a clock counts:
 * 9.96 s reads "9.9" (never "10.0" beside another clock's "0:10"), so tenths show exactly when `lowClock` is true.
 */
export function formatClock(seconds) {
  if (seconds === null || seconds === undefined) return "–";
  const s = Math.max(0, seconds);
  if (lowClock(s)) return (Math.floor(s * 10) / 10).toFixed(1);
  const whole = Math.floor(s);
  const hours = Math.floor(whole / 3600);
  const minutes = Math.floor((whole % 3600) / 60);
  const secs = String(whole % 60).padStart(2, "0");
  return hours ? `${hours}:${String(minutes).padStart(2, "0")}:${secs}` : `${minutes}:${secs}`;
}

/**
 * A clock under ten seconds: shown in tenths and in red.
 * @param {number} seconds
 */
export function lowClock(seconds) {
  return seconds < 10;
}

/** A time control as people say it: "30 s a move", "5 min + 2 s", "untimed". */
export function describeTimeControl(control) {
  if (!control || control.untimed) return "untimed";
  if (control.per_move !== undefined) return `${trimNumber(control.per_move)} s a move`;
  const initial = control.initial >= 60 && control.initial % 60 === 0 ? `${control.initial / 60} min` : `${trimNumber(control.initial)} s`;
  return control.increment ? `${initial} + ${trimNumber(control.increment)} s` : initial;
}

function trimNumber(n) {
  return Number.isInteger(n) ? String(n) : String(Math.round(n * 100) / 100);
}

/** A date from Unix seconds, short and local. */
export function formatDate(unixSeconds) {
  if (!unixSeconds) return "";
  return new Date(unixSeconds * 1000).toLocaleString(undefined, { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });
}

/** The text of a result: "ann won: four in a row", "Draw: draw agreed", "Aborted: ...". */
export function resultText(result, players) {
  if (result.winner === null || result.winner === undefined) {
    return `${result.status === "aborted" ? "Aborted" : "Draw"}: ${result.reason}`;
  }
  return `${players[result.winner] || `Seat ${result.winner}`} won: ${result.reason}`;
}

/** Points as people write them: 2, 2½, ½; other fractions (tie-breaks) to two decimals. */
export function formatPoints(value) {
  if (Number.isInteger(value)) return String(value);
  if (Number.isInteger(value * 2)) return `${Math.floor(value) || ""}½`;
  return String(Math.round(value * 100) / 100);
}

/** A number from the address (a move, an offset): a whole number ("2.5" is 2), 0 for none or what is no number ("abc"). */
export function wholeNumber(part) {
  const number = Math.trunc(Number(part || 0));
  return Number.isFinite(number) ? number : 0;
}
