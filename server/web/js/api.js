// @ts-check
/** The server's read-only HTTP API (PROTOCOL.md §13). */

/** An HTTP error answer: `status` and the server's message. */
export class HttpError extends Error {
  constructor(status, message) {
    super(message);
    this.name = "HttpError";
    this.status = status;
  }
}

/**
 * The address of the server's `path` (`/api/games`, `/ws`): beside the page, wherever the page is served (at the
 * host's root, or under a proxy's path prefix such as `https://example.org/plyhall/`).
 * @param {string} path
 * @param {string} [base] the page's address
 * @returns {string}
 */
export function serverUrl(path, base = document.baseURI) {
  return new URL(path.replace(/^\/+/, ""), base).href;
}

/**
 * GET a JSON document from this server; rejects with an HttpError.
 * @param {string} path
 * @returns {Promise<any>}
 */
export async function getJson(path) {
  let response;
  try {
    response = await fetch(serverUrl(path), { headers: { Accept: "application/json" } });
  } catch {
    throw new HttpError(0, "the server cannot be reached");
  }
  /** @type {any} */
  let body = null;
  try {
    body = await response.json();
  } catch {
    // not JSON: the status says enough
  }
  if (!response.ok) throw new HttpError(response.status, (body && body.error) || `HTTP ${response.status}`);
  return body;
}

/** A query string from the set values of `params`. */
export function query(params) {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value !== undefined && value !== null && value !== "") search.set(key, value);
  const text = search.toString();
  return text ? `?${text}` : "";
}
