// @ts-check
/**
 * A game board on the page: a grid of square buttons with coordinates on its edges, in the
 * player's convention, and (Quarto) the pieces off the board.
 *
 * Mouse: click a square or piece. Keyboard: the board is one tab stop; arrow keys move
 * between squares (Home/End: ends of the row), Enter or Space picks, Escape takes the last
 * pick back. Every square's aria-label names it in the player's convention and says what it
 * holds and whether it is a legal target.
 */

import { edgeLabels, parseName, spoken, squareName } from "./coords.js";
import { drawInto, h } from "./dom.js";

export class BoardView {
  /**
   * `options.onPick(token)`: a square or piece was picked; `options.onBack()`: Escape.
   * Without handlers the board only shows (replays).
   */
  constructor(game, coords, options = {}) {
    this.game = game;
    this.coords = coords;
    this.onPick = options.onPick || null;
    this.onBack = options.onBack || null;
    this.state = null;
    this.targets = new Set();
    this.dropped = null;
    /** @type {string | null} the square under the mouse */
    this.hovered = null;
    this.flipped = Boolean(options.flipped); // turned half a turn: the last rank at the bottom (Amazons' flip)
    /** @type {any} what the last update() was given, to draw again after a flip */
    this.view = {};
    /** @type {string[]} the squares showBest() outlines, to outline again after a flip */
    this.best = [];
    this.squares = new Map();
    this.pieces = new Map(); // the pieces off the board (Quarto), by token
    this.element = h("div", { class: `board-wrap game-${game.id}` });
    this.element.style.setProperty("--w", String(game.width)); // for the page's cap on the board's size
    this.element.style.setProperty("--h", String(game.height));
    this.grid = this.buildGrid(options.label || `${game.title} board`);
    this.element.append(this.grid);
    if (game.tray) {
      this.hand = h("p", { class: "in-hand", "aria-live": "polite" });
      this.tray = h("div", { class: "tray", role: "group", "aria-label": "Pieces not on the board" });
      for (const item of game.tray(game.initial({}))) {
        const button = h("button", { type: "button", class: "piece", "data-piece": item.code, tabindex: "-1" },
          h("span", { class: "drawing" }));
        button.addEventListener("click", () => this.pick(item.token));
        this.pieces.set(item.token, button);
        this.tray.append(button);
      }
      this.tray.firstChild.tabIndex = 0;
      this.tray.addEventListener("keydown", (event) => this.trayKey(event));
      this.element.append(this.hand, this.tray);
    }
  }

  buildGrid(title) {
    const { width, height } = this.game;
    const edges = this.game.edges ? this.game.edges(this.coords) : edgeLabels(width, height, this.coords);
    if (this.flipped) edges.files = edges.files.slice().reverse();
    if (this.flipped && edges.ranks) edges.ranks = edges.ranks.slice().reverse();
    const grid = h("div", { class: `board${this.flipped ? " flipped" : ""}`, role: "group", "aria-label": title });
    grid.style.setProperty("--w", width);
    grid.style.setProperty("--h", height);
    if (edges.ranks) grid.classList.add("ranked");
    const fileRow = () => [edges.ranks ? h("span", { class: "edge corner", "aria-hidden": "true" }) : null,
      ...edges.files.map((text) => h("span", { class: "edge file", "aria-hidden": "true", text }))];
    if (edges.filesOnTop) grid.append(...fileRow().filter(Boolean));
    for (let row = 0; row < height; row++) {
      const r = this.flipped ? row : height - 1 - row;
      if (edges.ranks) grid.append(h("span", { class: "edge rank", "aria-hidden": "true", text: edges.ranks[row] }));
      for (let column = 0; column < width; column++) {
        const f = this.flipped ? width - 1 - column : column;
        const name = squareName(f, r);
        const button = h("button", { type: "button", class: `sq ${(f + r) % 2 ? "light" : "dark"}`, "data-sq": name, tabindex: "-1" },
          h("span", { class: "drawing" }));
        button.addEventListener("click", () => this.pick(this.game.tokenAt(this.state, name)));
        button.addEventListener("mouseenter", () => this.hover(name));
        button.addEventListener("mouseleave", () => this.hover(null));
        this.squares.set(name, button);
        grid.append(button);
      }
    }
    if (!edges.filesOnTop) grid.append(...fileRow().filter(Boolean));
    this.focused = squareName(0, 0);
    this.squares.get(this.focused).tabIndex = 0;
    grid.addEventListener("keydown", (event) => this.boardKey(event));
    return grid;
  }

  /**
   * Show `state`. `view`: {targets: Set of tokens, chosen: [tokens], interactive: bool}.
   */
  update(state, view = {}) {
    this.state = state;
    this.view = view;
    this.targets = view.targets || new Set();
    const interactive = Boolean(view.interactive);
    const chosen = new Set(view.chosen || []);
    const marks = new Set(state.marks || []);
    const win = new Set(this.game.winLine(state));
    const targetSquares = new Set([...this.targets].flatMap((token) => this.game.targets(state, token)));
    this.grid.classList.toggle("interactive", interactive);
    for (const [name, button] of this.squares) {
      const { markup, text, empty } = this.game.cell(state, name);
      drawInto(button.firstChild, markup);
      const isTarget = targetSquares.has(name);
      const isChosen = chosen.has(name);
      button.classList.toggle("filled", Boolean(markup) && !empty);
      button.classList.toggle("target", isTarget);
      button.classList.toggle("chosen", isChosen);
      button.classList.toggle("mark", marks.has(name));
      button.classList.toggle("win", win.has(name));
      button.classList.toggle("inert", interactive && !isTarget && !isChosen);
      const where = this.game.spoken ? this.game.spoken(name, this.coords) : spoken(name, this.coords, this.game.height);
      button.setAttribute("aria-label", `${where}: ${text}${isTarget ? ", legal" : ""}${isChosen ? ", picked" : ""}`);
    }
    this.showDrop(state.dropped || null);
    if (this.tray) this.updateTray(state, chosen, interactive);
    this.hover(this.hovered); // a square that is no target any more (the game ended) loses its hover look
  }

  /**
   * Turn the board half a turn (or back): the last rank and file come to the bottom left.
   * @param {boolean} flipped
   */
  setFlipped(flipped) {
    if (flipped === this.flipped) return;
    this.flipped = flipped;
    const label = this.grid.getAttribute("aria-label") || `${this.game.title} board`;
    this.squares = new Map();
    this.dropped = null;
    const grid = this.buildGrid(label);
    this.grid.replaceWith(grid);
    this.grid = grid;
    if (this.state) this.update(this.state, this.view);
    this.showBest(this.best);
  }

  /** Outline the squares of a suggested move (the analysis' best move); `[]` clears them. */
  showBest(squares) {
    this.best = [...squares];
    const best = new Set(squares);
    for (const [name, button] of this.squares) button.classList.toggle("best", best.has(name));
  }

  updateTray(state, chosen, interactive) {
    const items = this.game.tray(state);
    for (const item of items) {
      const button = this.pieces.get(item.token);
      drawInto(button.firstChild, item.markup);
      const isTarget = this.targets.has(item.token);
      button.classList.toggle("used", item.used);
      button.classList.toggle("target", isTarget);
      button.classList.toggle("chosen", chosen.has(item.token));
      button.classList.toggle("inert", interactive && !isTarget);
      button.setAttribute("aria-label", `${item.text}${item.used ? ", in play" : ""}${isTarget ? ", can be handed over" : ""}`);
    }
    if (state.inHand) {
      const item = items.find((piece) => piece.code === state.inHand);
      const drawing = h("span", { class: "drawing" });
      drawInto(drawing, item.markup);
      this.hand.replaceChildren("To place: ", drawing, ` ${item.text}`);
    } else {
      this.hand.replaceChildren(state.placing ? "Now choose the piece to hand over." : "");
    }
  }

  /** The Connect Four disc that just dropped falls from the top of its column. */
  showDrop(square) {
    if (square === this.dropped) return;
    if (this.dropped) this.squares.get(this.dropped).classList.remove("drop");
    this.dropped = square;
    if (!square) return;
    const button = this.squares.get(square);
    button.style.setProperty("--fall", this.game.height - parseName(square).r);
    button.classList.add("drop");
  }

  hover(name) {
    this.hovered = name;
    for (const button of this.squares.values()) button.classList.remove("hover");
    if (!name || !this.state) return;
    const token = this.game.tokenAt(this.state, name);
    if (!this.targets.has(token)) return;
    for (const square of this.game.targets(this.state, token)) this.squares.get(square).classList.add("hover");
  }

  pick(token) {
    if (this.onPick && this.state) this.onPick(token);
  }

  boardKey(event) {
    const { width, height } = this.game;
    const { f, r } = parseName(this.focused);
    const s = this.flipped ? -1 : 1; // on a flipped board "up" is towards rank 1
    const moves = { ArrowLeft: [f - s, r], ArrowRight: [f + s, r], ArrowUp: [f, r + s], ArrowDown: [f, r - s],
      Home: [this.flipped ? width - 1 : 0, r], End: [this.flipped ? 0 : width - 1, r] };
    if (event.key === "Escape" && this.onBack) {
      this.onBack();
      event.preventDefault();
      return;
    }
    const next = moves[event.key];
    if (!next) return;
    event.preventDefault();
    const [nf, nr] = next;
    if (nf < 0 || nf >= width || nr < 0 || nr >= height) return;
    this.focusSquare(squareName(nf, nr));
  }

  /** Move the keyboard focus (and the board's tab stop) to a square. */
  focusSquare(name) {
    this.squares.get(this.focused).tabIndex = -1;
    this.focused = name;
    const button = this.squares.get(name);
    button.tabIndex = 0;
    button.focus();
  }

  trayKey(event) {
    const buttons = [...this.pieces.values()];
    const index = buttons.indexOf(document.activeElement);
    const columns = Math.round(this.tray.clientWidth / Math.max(1, buttons[0].offsetWidth)) || 8;
    const step = { ArrowLeft: -1, ArrowRight: 1, ArrowUp: -columns, ArrowDown: columns }[event.key];
    if (event.key === "Escape" && this.onBack) {
      this.onBack();
      event.preventDefault();
      return;
    }
    if (step === undefined || index < 0) return;
    event.preventDefault();
    const next = buttons[Math.min(buttons.length - 1, Math.max(0, index + step))];
    for (const button of buttons) button.tabIndex = -1;
    next.tabIndex = 0;
    next.focus();
  }
}
