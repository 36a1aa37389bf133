// @ts-check
/**
 * The rooms the player is in (seated or watching), kept up to date from server messages.
 *
 * A RoomModel follows one room: seats, the position (replayed from the moves' notation,
 * which is the same for everybody), clocks, the result, away players, draw offers and chat.
 * When it is the player's turn it asks the server for the legal moves and lets the player
 * pick one click by click (picker.js). Views listen to its "change" events.
 */

import { label } from "./coords.js";
import { gameOf } from "./games/index.js";
import { Picker } from "./picker.js";

/** @typedef {import("./games/common.js").AnyGame} AnyGame */
/** @typedef {import("./session.js").Session} Session */
/**
 * A game's result as the page keeps it.
 * @typedef {{winner: number | null, reason: string, status: string, record?: string | null, nextGame?: boolean}} Result
 */

const CHAT_LINES = 200;
const ROOM_MESSAGES = new Set(["joined", "left", "seated", "game_start", "room_state", "moved", "game_over",
  "player_away", "player_back", "draw_offered", "chat"]);

/**
 * The position a game_start or room_state carries, with the squares of its last move marked as after a move played
 * here: the wire's state does not say them, so the moves are replayed from the start (a room opened mid-game, or
 * coming back after a reload or a resync, shows the last move like one watched live).
 * @param {AnyGame} game
 * @param {any} msg
 * @param {import("./coords.js").Coords} coords
 */
function arrived(game, msg, coords) {
  const state = game.decode(msg.state, coords);
  const moves = msg.moves || [];
  if (!moves.length) return state;
  try {
    let replayed = game.initial(msg.options || {});
    for (const notation of moves) replayed = game.apply(replayed, notation);
    return { ...state, marks: replayed.marks || [] };
  } catch {
    return state; // moves this page cannot follow from the start: no mark rather than a wrong one
  }
}

export class RoomModel extends EventTarget {
  /**
   * @param {string} name
   * @param {Session} session
   */
  constructor(name, session) {
    super();
    this.name = name;
    this.session = session;
    /** @type {Record<string, any> | null} */
    this.settings = null; // the room summary
    /** @type {(string | null)[]} */
    this.seats = [null, null];
    /** @type {string | null} */
    this.role = null; // "player", "spectator", or null once left
    /** @type {number | null} */
    this.seat = null;
    /** @type {AnyGame | null} */
    this.game = null;
    /** @type {any} */
    this.state = null; // a position of this.game
    /** @type {string[]} */
    this.moves = [];
    /** @type {number | null} */
    this.toMove = null;
    /** @type {{left?: number[], running?: number | null} | null} */
    this.clocks = null;
    this.clocksAt = 0; // performance.now() when the clocks were sent
    /** @type {number | null} the seat that made the last move told by a `moved` (not by a whole state) */
    this.lastMoveBy = null;
    /** @type {number | null} performance.now() when the connection was lost: the clocks shown stop there */
    this.frozenAt = null;
    this.status = "waiting"; // waiting, playing, finished (the room's game)
    /** @type {Result | null} */
    this.result = null;
    /** @type {string[] | null} who played the last finished game, by seat */
    this.lastPlayers = null;
    /** @type {string | null} */
    this.record = null;
    this.gameNo = 0;
    this.paused = false;
    /** @type {number | null} seconds a move of yours may wait before you lose (a game against a house bot) */
    this.idle = null;
    /** @type {number | null} when (performance.now() ms) the move you are to make has waited that long */
    this.idleUntil = null;
    /** @type {Map<number, {name: string, until: number}>} */
    this.away = new Map(); // seat -> {name, until (performance.now() ms)}
    /** @type {number | null} */
    this.drawOffer = null; // the seat whose draw offer stands
    /** @type {{from: string, text: string}[]} */
    this.chat = [];
    /** @type {Record<string, number> | null} */
    this.score = null; // a series' points by name
    /** @type {{gameNo: number, result: Result, players: string[]}[]} */
    this.finished = []; // the games of the room that ended while the page was in it
    /** @type {{text: string, kind: string} | null} */
    this.notice = null; // kind: "error" | "info"
    /** @type {Picker | null} */
    this.picker = null;
    this.sending = false;
    this.asked = -1; // the move count for which legal moves were asked
    /** @type {string | null} */
    this.expecting = null; // the level of a house bot asked for, until it sits down
  }

  get coords() {
    return this.session.me ? this.session.me.coords : "algebraic";
  }

  get isPlayer() {
    return this.role === "player";
  }

  get myTurn() {
    return this.isPlayer && this.status === "playing" && !this.paused && this.toMove === this.seat;
  }

  /** A square in the player's convention. */
  say(square) {
    return label(square, this.coords, this.game ? this.game.height : 8);
  }

  /** The `say` the game modules' prompts and refusals take: `say(square)`, with `say.coords`. */
  sayer() {
    const say = (square) => this.say(square);
    say.coords = this.coords;
    return say;
  }

  /** The position as the board should show it: with the picked part of a move applied. */
  shownState() {
    if (!this.state || !this.game || !this.picker || !this.picker.chosen.length) return this.state;
    return this.game.preview(this.state, this.picker.chosen);
  }

  /** Seconds left on each clock now (null for an untimed game). */
  clockNow() {
    const clocks = this.clocks;
    if (!clocks || !clocks.left || clocks.left.every((left) => left === null)) return null; // untimed: no clock
    const elapsed = ((this.frozenAt ?? performance.now()) - this.clocksAt) / 1000;
    return clocks.left.map((left, seat) => (seat === clocks.running && !this.paused ? Math.max(0, left - elapsed) : left));
  }

  changed() {
    this.dispatchEvent(new Event("change"));
  }

  handle(msg) {
    const handler = this[`on_${msg.type}`];
    if (handler) {
      handler.call(this, msg);
      this.changed();
    }
  }

  on_joined(msg) {
    this.role = msg.role;
    this.seat = msg.seat;
    this.applySettings(msg.settings);
    if (msg.settings.status !== "playing") this.session.request({ type: "state", room: this.name }).catch(() => {});
  }

  on_left() {
    this.role = null;
    this.picker = null;
  }

  on_seated(msg) {
    this.seats = msg.seats;
    if (this.settings) this.settings = { ...this.settings, seats: msg.seats };
  }

  on_game_start(msg) {
    const game = this.useGame(msg.game, msg.options);
    this.seats = msg.players;
    this.seat = msg.seat;
    this.state = arrived(game, msg, this.coords);
    this.moves = msg.moves.slice();
    this.toMove = msg.to_move;
    this.setClocks(msg.clocks);
    this.status = "playing";
    this.result = null;
    this.lastPlayers = null;
    this.record = msg.record;
    this.gameNo = msg.game_no;
    this.paused = Boolean(msg.paused);
    this.idle = typeof msg.idle === "number" ? msg.idle : null;
    this.idleUntil = typeof msg.idle_left === "number" ? performance.now() + msg.idle_left * 1000 : null;
    this.drawOffer = null;
    this.notice = this.paused ? { kind: "info", text: "The server restarted: the game waits until both players are back." } : null;
    this.picker = null;
    this.sending = false;
    this.asked = -1;
    this.askLegalMoves();
  }

  on_room_state(msg) {
    const game = this.useGame(msg.game, msg.options);
    this.seats = msg.players;
    this.seat = msg.seat;
    this.status = msg.status;
    this.gameNo = msg.game_no;
    if (msg.state) {
      this.state = arrived(game, msg, this.coords);
      this.moves = (msg.moves || []).slice();
      this.toMove = msg.to_move;
      this.record = msg.record;
      if (msg.clocks) this.setClocks(msg.clocks);
    }
    if (msg.last_result) {
      this.result = { ...msg.last_result, nextGame: msg.status === "waiting" };
      if (msg.last_result.players) this.lastPlayers = msg.last_result.players;
    }
  }

  on_moved(msg) {
    if (!this.state || !this.game || msg.seq !== this.moves.length + 1) {
      this.resync();
      return;
    }
    try {
      this.state = this.game.apply(this.state, msg.notation);
    } catch {
      this.resync();
      return;
    }
    this.moves.push(msg.notation);
    this.lastMoveBy = msg.seat; // (for the announcement a screen reader makes of it)
    this.toMove = msg.to_move;
    this.idleUntil = this.idle !== null && msg.to_move === this.seat ? performance.now() + this.idle * 1000 : null;
    this.setClocks(msg.clocks);
    if (this.drawOffer !== msg.seat) this.drawOffer = null; // moving declines the opponent's offer
    this.picker = null;
    this.sending = false;
    if (msg.seat === this.seat) this.notice = null;
    this.askLegalMoves();
  }

  on_game_over(msg) {
    this.status = "finished";
    this.toMove = null;
    this.setClocks(msg.clocks);
    this.seats = msg.players;
    this.lastPlayers = msg.players; // the names of the finished game, kept when its players leave the room
    this.result = { winner: msg.winner, reason: msg.reason, status: msg.status, record: msg.record, nextGame: msg.next_game };
    this.finished.push({ gameNo: msg.game_no, result: this.result, players: msg.players });
    const score = this.score;
    if (score && msg.status !== "aborted") {
      msg.players.forEach((name, seat) => {
        const points = msg.winner === null ? 0.5 : msg.winner === seat ? 1 : 0;
        score[name] = (score[name] || 0) + points;
      });
    }
    this.record = msg.record;
    this.picker = null;
    this.sending = false;
    this.drawOffer = null;
    this.notice = null;
  }

  on_player_away(msg) {
    this.away.set(msg.seat, { name: msg.name, until: performance.now() + msg.grace * 1000 });
  }

  on_player_back(msg) {
    this.away.delete(msg.seat);
  }

  on_draw_offered(msg) {
    this.drawOffer = msg.seat;
  }

  on_chat(msg) {
    this.chat.push({ from: msg.from, text: msg.text });
    if (this.chat.length > CHAT_LINES) this.chat.splice(0, this.chat.length - CHAT_LINES);
  }

  /**
   * Follow the game `id` (a start position until the server sends one); returns its module.
   * @param {string} id
   * @param {import("./games/common.js").GameOptions} [options]
   */
  useGame(id, options) {
    const game = gameOf(id);
    this.game = game;
    if (!this.state) this.state = game.initial(options);
    return game;
  }

  applySettings(settings) {
    this.settings = settings;
    if (settings.games > 1) this.score = { ...(settings.score || {}) };
    this.seats = settings.seats;
    this.useGame(settings.game, settings.options);
    if (this.status !== "playing") this.status = settings.status === "playing" ? "playing" : settings.status;
  }

  setClocks(clocks) {
    this.clocks = clocks;
    this.clocksAt = performance.now();
    this.frozenAt = null; // the server's own figures again
  }

  /**
   * The connection to the server is lost (``down``) or back: while it is lost nobody knows what the clocks do (a
   * restarted server pauses the game), so they stop where they were; the server's next figures start them again.
   * @param {boolean} down
   */
  connectionDown(down) {
    if (down && this.frozenAt === null) this.frozenAt = performance.now();
  }

  resync() {
    this.picker = null;
    this.session.request({ type: "state", room: this.name }).catch(() => {});
  }

  /** When it is the player's turn, ask the server for the legal moves (once per position). */
  askLegalMoves() {
    const game = this.game;
    if (!this.myTurn || !game || this.asked === this.moves.length) return;
    const count = this.moves.length;
    this.asked = count;
    this.session.request({ type: "legal_moves", room: this.name }).then((reply) => {
      // a second answer for the same position (a game_start that came twice asks again) keeps the first one's
      // picker: the player may be picking with it already
      if (this.moves.length !== count || !this.myTurn || this.picker) return;
      this.picker = new Picker(reply.moves.map((move) => ({ move, sequences: game.steps(move, this.coords) })));
      this.changed();
    }).catch((error) => {
      this.asked = -1;
      this.tell(error.message, "error");
    });
  }

  tell(text, kind = "info") {
    this.notice = text ? { text, kind } : null;
    this.changed();
  }

  /** Why the player cannot pick anything now, or null when they can. */
  whyNot() {
    if (!this.isPlayer) return "You are watching this game.";
    if (this.status === "waiting") return "The game has not started: it starts when both seats are taken.";
    if (this.status !== "playing") return "The game is over.";
    if (this.paused) return "The game is paused until both players are back.";
    if (this.toMove !== this.seat) return `It is ${this.seats[this.toMove ?? -1] || "your opponent"}'s turn.`;
    if (this.sending) return "Your move is on its way.";
    if (!this.picker) return "Getting the legal moves…";
    return null;
  }

  /** The player clicked a square, column or piece (a token): pick it, refuse it, or send the move. */
  pick(token) {
    const why = this.whyNot();
    if (why) {
      this.tell(why, "error");
      return;
    }
    const picker = /** @type {Picker} */ (this.picker); // there is one when whyNot() has no objection
    const game = /** @type {AnyGame} */ (this.game);
    const shown = this.shownState();
    const answer = picker.choose(token);
    if (answer.refused) {
      this.tell(game.refuse(shown, picker.chosen, token, this.sayer()), "error");
    } else if (answer.move !== undefined) {
      this.sendMove(answer.move);
    } else {
      this.tell(null);
    }
  }

  /** Undo the last pick (Escape). */
  back() {
    if (this.picker && this.picker.back()) this.tell(null);
  }

  sendMove(move) {
    this.sending = true;
    this.notice = null;
    this.changed();
    // the game's number: a move that crosses the game's end (a flag fell) is refused, not played in the next game
    this.session.request({ type: "move", room: this.name, move, game_no: this.gameNo }).catch((error) => {
      this.sending = false;
      if (this.picker) this.picker.chosen = [];
      this.tell(error.message, "error");
    });
  }

  /** Send a request about this room; a refusal becomes the room's notice. */
  act(type, extra = {}) {
    // a resignation or draw offer names its game: one that crosses the game's end is refused, not given to the next
    const game = type === "resign" || type === "offer_draw" ? { game_no: this.gameNo } : {};
    return this.session.request({ type, room: this.name, ...game, ...extra }).catch((error) => {
      this.tell(error.message, "error");
      throw error;
    });
  }
}

/** Every room the player is in, by name; routes room messages to their model. */
export class RoomStore {
  constructor(session) {
    this.session = session;
    this.rooms = new Map();
    /** @type {Map<string, {chat: {from: string, text: string}[], finished: any[]}>} what a watched room's page had shown
     * before a new login (a change of coordinates, a claim), for the model its view joins again */
    this.carried = new Map();
    session.on("*", (msg) => {
      if (!ROOM_MESSAGES.has(msg.type) || typeof msg.room !== "string") return;
      this.get(msg.room).handle(msg); // a room left stays (without a role) until the next login
    });
    session.on("error", (msg) => {
      // errors without an id (a move refused in a room that makes illegal moves lose, ...)
      if (msg.room && this.rooms.has(msg.room)) this.rooms.get(msg.room).tell(msg.message, "error");
    });
    session.addEventListener("welcome", (event) => {
      // a new login resends joined and game_start for the seats it holds; a room that was only
      // watched is joined again by its view
      this.carried.clear();
      for (const [name, model] of [...this.rooms]) {
        if (event.detail.rooms.includes(name)) continue;
        this.rooms.delete(name);
        if (model.role) this.carried.set(name, { chat: model.chat, finished: model.finished });
      }
    });
  }

  get(name) {
    if (!this.rooms.has(name)) {
      const model = new RoomModel(name, this.session);
      const carried = this.carried.get(name);
      if (carried) { // the chat and the games seen so far stay on the page of a room watched again
        this.carried.delete(name);
        model.chat = carried.chat;
        model.finished = carried.finished;
      }
      this.rooms.set(name, model);
    }
    return this.rooms.get(name);
  }

  /** Rooms where the player holds a seat. */
  seated() {
    return [...this.rooms.values()].filter((model) => model.isPlayer);
  }
}
