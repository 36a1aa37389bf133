// @ts-check
/**
 * What the browser keeps between visits (localStorage): the identity (name, coordinate
 * convention, the resume token of the last `welcome`, and the secret only if the player
 * asked to remember it) and small preferences. Storage may be unavailable (private modes):
 * then nothing is kept and nothing fails.
 */

const IDENTITY = "plyhall.identity";
const PREFERENCES = "plyhall.preferences";

function read(key) {
  try {
    const text = window.localStorage.getItem(key);
    return text ? JSON.parse(text) : null;
  } catch {
    return null;
  }
}

function write(key, value) {
  try {
    if (value === null) window.localStorage.removeItem(key);
    else window.localStorage.setItem(key, JSON.stringify(value));
  } catch {
    // storage full or disabled: the page works, it just does not remember
  }
}

/** {name, coords, resume, secret?} or null. */
export function loadIdentity() {
  const identity = read(IDENTITY);
  return identity && typeof identity.name === "string" ? identity : null;
}

export function saveIdentity(identity) {
  write(IDENTITY, identity);
}

export function forgetIdentity() {
  write(IDENTITY, null);
}

/** Preferences: {coords, autoplaySeconds, ...}. */
export function loadPreferences() {
  return read(PREFERENCES) || {};
}

export function savePreference(key, value) {
  write(PREFERENCES, { ...loadPreferences(), [key]: value });
}
