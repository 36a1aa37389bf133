// @ts-check
/**
 * Picking a move click by click among the legal moves the server listed.
 *
 * Each legal move is one or more sequences of tokens (see games/common.js): a square, a
 * column, a piece. The picker keeps the tokens chosen so far; the legal targets are the
 * next tokens of the sequences that start with them. A move is chosen when the chosen
 * tokens make up one of its sequences.
 */
export class Picker {
  /** `entries`: [{move, sequences: [[token, ...], ...]}] */
  constructor(entries) {
    this.paths = entries.flatMap(({ move, sequences }) => sequences.map((tokens) => ({ move, tokens })));
    this.chosen = [];
  }

  /** True when there is no legal move at all. */
  get empty() {
    return this.paths.length === 0;
  }

  /** The tokens that may come next. */
  targets(chosen = this.chosen) {
    const next = new Set();
    for (const { tokens } of this.paths) {
      if (tokens.length > chosen.length && chosen.every((token, i) => tokens[i] === token)) next.add(tokens[chosen.length]);
    }
    return next;
  }

  /**
   * Take one token. Returns {move} when it completes a move, {picked: true} when it extends
   * the choice (or undoes the last token, when it is picked again), {refused: true} otherwise.
   * A token that starts a move afresh (another queen, another worker) restarts the choice.
   */
  choose(token) {
    if (this.chosen.length && this.chosen[this.chosen.length - 1] === token) {
      this.chosen.pop();
      return { picked: true };
    }
    let chosen = [...this.chosen, token];
    if (!this.targets(this.chosen).has(token)) {
      if (!this.chosen.length || !this.targets([]).has(token)) return { refused: true };
      chosen = [token];
    }
    const done = this.paths.find(({ tokens }) => tokens.length === chosen.length && tokens.every((t, i) => t === chosen[i]));
    this.chosen = chosen; // a completed move stays shown as picked until the server answers
    return done ? { move: done.move } : { picked: true };
  }

  /** Undo the last token; false when nothing was chosen. */
  back() {
    return this.chosen.pop() !== undefined;
  }
}
