// @ts-check
/**
 * One WebSocket connection to the server, speaking plyhall.v1.json.
 *
 * `request(msg)` gives the message an `id` and resolves with the reply that echoes it (or
 * rejects with a ServerError carrying the error's code and message). Every other message,
 * and every reply but errors, also goes to the listeners added with `onMessage`.
 */

import { serverUrl } from "./api.js";

export const SUBPROTOCOL = "plyhall.v1.json";

/** A refusal from the server (`code` as in PROTOCOL.md §7), or a lost connection (`closed`). */
export class ServerError extends Error {
  constructor(code, message, extra = {}) {
    super(message);
    this.name = "ServerError";
    this.code = code;
    Object.assign(this, extra);
  }
}

/**
 * The WebSocket address of the server that served this page (its `/ws`, under the page's path prefix if any).
 * @param {string} [base] the page's address
 */
export function socketUrl(base = document.baseURI) {
  const url = new URL(serverUrl("/ws", base));
  return `${url.protocol === "https:" ? "wss" : "ws"}://${url.host}${url.pathname}`;
}

export class Connection {
  constructor(url = socketUrl()) {
    this.url = url;
    this.socket = null;
    this.nextId = 1;
    this.pending = new Map();
    this.listeners = new Set();
    this.closeListeners = new Set();
    this.closedByUs = false;
  }

  /** Connect; resolves once the socket is open, rejects when the server cannot be reached. */
  open() {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(this.url, SUBPROTOCOL);
      this.socket = socket;
      let opened = false;
      socket.addEventListener("open", () => {
        opened = true;
        resolve(undefined);
      });
      socket.addEventListener("message", (event) => this.receive(event.data));
      socket.addEventListener("close", (event) => {
        for (const { reject: fail } of this.pending.values()) fail(new ServerError("closed", "the connection to the server closed"));
        this.pending.clear();
        if (!opened) reject(new ServerError("unreachable", "the server cannot be reached"));
        for (const listener of this.closeListeners) listener(event, this.closedByUs);
      });
    });
  }

  get isOpen() {
    return this.socket !== null && this.socket.readyState === WebSocket.OPEN;
  }

  /** Send a message without waiting for its answer. */
  send(message) {
    if (!this.isOpen) throw new ServerError("closed", "not connected to the server");
    /** @type {WebSocket} */ (this.socket).send(JSON.stringify(message));
  }

  /** Send a request; resolves with its reply, rejects with a ServerError. */
  request(message, timeoutMs = 20000) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new ServerError("timeout", "the server did not answer in time"));
      }, timeoutMs);
      this.pending.set(id, {
        resolve: (reply) => { clearTimeout(timer); resolve(reply); },
        reject: (error) => { clearTimeout(timer); reject(error); },
      });
      try {
        this.send({ ...message, id });
      } catch (error) {
        this.pending.get(id).reject(error);
        this.pending.delete(id);
      }
    });
  }

  /** Call `listener(message)` for every message but error replies; returns a function that stops it. */
  onMessage(listener) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Call `listener(closeEvent, closedByUs)` when the connection closes. */
  onClose(listener) {
    this.closeListeners.add(listener);
    return () => this.closeListeners.delete(listener);
  }

  close() {
    this.closedByUs = true;
    if (this.socket) this.socket.close(1000, "bye");
  }

  receive(data) {
    let message;
    try {
      message = JSON.parse(data);
    } catch {
      return; // the server only sends JSON; nothing sensible to do with anything else
    }
    const waiting = message.id !== undefined ? this.pending.get(message.id) : undefined;
    if (waiting) {
      this.pending.delete(message.id);
      if (message.type === "error") {
        waiting.reject(new ServerError(message.code, message.message, { retryAfter: message.retry_after, room: message.room }));
        return;
      }
      waiting.resolve(message);
    }
    for (const listener of this.listeners) listener(message);
  }
}
