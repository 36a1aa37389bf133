// @ts-check
/**
 * The logged-in player: one connection at a time, logged in under a name.
 *
 * Logging in again (to claim the name with a secret, or to change the coordinate
 * convention) opens a new connection and logs in with the resume token, which takes the
 * session over from the old one. A dropped connection is retried with the resume token,
 * so a reload or a network blip keeps the player's seats. Server messages reach
 * `on(type, listener)` subscribers whichever connection carries them.
 */

import { Connection, ServerError } from "./connection.js";
import { forgetIdentity, loadIdentity, saveIdentity } from "./storage.js";

const CLIENT = "plyhall-web";
const RETRY_SECONDS = [1, 2, 4, 8, 15];

export class Session extends EventTarget {
  constructor() {
    super();
    this.connection = null;
    this.me = null; // the last welcome: name, coords, claimed, games, rooms, house
    this.status = "out"; // out, connecting, in, lost (retrying), replaced (logged in elsewhere)
    this.listeners = new Map();
    this.retries = 0;
    /** @type {any} */
    this.retryTimer = null; // setTimeout's id while a reconnection waits
  }

  get loggedIn() {
    return this.status === "in";
  }

  /** Listen to server messages of one type ("*": all); returns a function that stops listening. */
  on(type, listener) {
    if (!this.listeners.has(type)) this.listeners.set(type, new Set());
    this.listeners.get(type).add(listener);
    return () => this.listeners.get(type).delete(listener);
  }

  /** Send a request on the current connection; resolves with its reply (ServerError when refused). */
  request(message) {
    if (!this.connection || !this.connection.isOpen) {
      return Promise.reject(new ServerError("closed", "not connected to the server"));
    }
    return this.connection.request(message);
  }

  /**
   * Log in as `name`. `secret` claims an unclaimed name or proves a claimed one; it is kept
   * in the browser only when `remember` is true. The stored resume token is sent along when
   * it belongs to this name, so a player who comes back gets their seats back.
   */
  async login({ name, secret = "", remember = false, coords = "algebraic" }) {
    const stored = loadIdentity();
    const mine = stored && stored.name === name ? stored : null;
    const message = { type: "login", name, coords, client: CLIENT };
    if (secret) message.secret = secret;
    if (mine && mine.resume) message.resume = mine.resume;
    if (!secret && mine && mine.secret) message.secret = mine.secret;
    const connection = new Connection();
    this.setStatus(this.status === "in" ? "in" : "connecting");
    try {
      await connection.open();
    } catch (error) {
      if (this.status !== "in") this.setStatus(stored ? "lost" : "out", error.message);
      throw error;
    }
    connection.onMessage((msg) => {
      if (connection === this.connection) this.deliver(msg);
    });
    let welcome;
    try {
      welcome = await connection.request(message);
    } catch (error) {
      connection.close();
      if (this.status !== "in") this.setStatus("out", error.message);
      throw error;
    }
    const previous = this.connection;
    this.connection = connection;
    if (previous && previous.isOpen) previous.close();
    connection.onClose((event, byUs) => this.closed(connection, event, byUs));
    const keepSecret = remember ? secret : mine && mine.secret && !secret ? mine.secret : undefined;
    saveIdentity({ name: welcome.name, coords: welcome.coords, resume: welcome.resume, ...(keepSecret ? { secret: keepSecret } : {}) });
    this.me = welcome;
    this.retries = 0;
    this.setStatus("in");
    this.dispatchEvent(new CustomEvent("welcome", { detail: welcome }));
    this.deliver(welcome);
    return welcome;
  }

  /** Log in again with what the browser kept; false when it kept nothing. */
  async resume() {
    const stored = loadIdentity();
    if (!stored) return false;
    await this.login({ name: stored.name, coords: stored.coords || "algebraic" });
    return true;
  }

  /** Log in again under the same name with changes (a secret to claim the name, another convention). */
  relogin(changes) {
    return this.login({ name: this.me.name, coords: this.me.coords, ...changes });
  }

  /** Log out: close the connection and forget the identity. */
  logout() {
    clearTimeout(this.retryTimer);
    forgetIdentity();
    const connection = this.connection;
    this.connection = null;
    this.me = null;
    if (connection) connection.close();
    this.setStatus("out");
  }

  /** Take the session back after another window took it over. */
  takeBack() {
    return this.resume();
  }

  deliver(message) {
    for (const type of [message.type, "*"]) {
      for (const listener of this.listeners.get(type) || []) listener(message);
    }
  }

  closed(connection, event, byUs) {
    if (connection !== this.connection || byUs) return;
    if (event.code === 1000 && /another connection/.test(event.reason)) {
      this.setStatus("replaced", "You logged in from another window or tab.");
      return;
    }
    this.retryLater(event.code === 1001 ? "The server is restarting." : "The connection to the server was lost.");
  }

  retryLater(why) {
    const seconds = RETRY_SECONDS[Math.min(this.retries, RETRY_SECONDS.length - 1)];
    this.retries += 1;
    this.setStatus("lost", `${why} Trying again in ${seconds} s…`);
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => {
      this.resume().catch((error) => {
        if (["closed", "unreachable", "timeout", "server_shutdown", "throttled", "busy"].includes(error.code)) {
          this.retryLater("The server cannot be reached.");
        } else {
          this.setStatus("out", error.message);
        }
      });
    }, seconds * 1000);
  }

  setStatus(status, text = "") {
    this.status = status;
    this.dispatchEvent(new CustomEvent("status", { detail: { status, text } }));
  }
}
