// @ts-check
/**
 * Logging in: the login form, and the identity menu in the header (claim the name with a
 * secret, change the coordinate convention, log out).
 */

import { CONVENTIONS } from "./coords.js";
import { field, h, replace } from "./dom.js";
import { loadIdentity, loadPreferences, savePreference } from "./storage.js";

const NAME_PATTERN = "[A-Za-z0-9][A-Za-z0-9_.\\-]{0,31}";

function conventionSelect(value) {
  return h("select", { name: "coords" },
    Object.entries(CONVENTIONS).map(([id, text]) => h("option", { value: id, text, selected: id === value })));
}

/**
 * A refused login in a person's words. The server's own sentence for a name kept for its away owner speaks to bot
 * operators (a bot restarted too soon, resume tokens, --secret): a person in a browser gets the same facts plainly.
 * @param {any} error
 * @param {string} name
 */
function explain(error, name) {
  if (error.code === "wrong_secret") return `${error.message}. If the name is yours, enter its secret.`;
  if (error.code === "resume_required") {
    const kept = `${name} is kept for the browser or program that was using it a moment ago`;
    if (typeof error.retryAfter === "number") {
      const seconds = Math.max(1, Math.ceil(error.retryAfter));
      return `${kept}: its seat in a game waits ${seconds} s for it to come back. Come back from that browser, try again in ${seconds} s, or choose another name.`;
    }
    return `${kept}, and it may come back. Come back from that browser, or choose another name.`;
  }
  if (error.code === "throttled") return `${error.message}.`;
  return error.message;
}

/** The login form; `done()` is called once logged in. */
export function mountLogin(main, app, done, why = "") {
  const stored = loadIdentity();
  const name = h("input", { name: "name", required: true, pattern: NAME_PATTERN, maxlength: "32", autocomplete: "username",
    value: stored ? stored.name : "", "aria-describedby": "name-help" });
  const secret = h("input", { name: "secret", type: "password", maxlength: "200", autocomplete: "current-password", "aria-describedby": "secret-help" });
  const remember = h("input", { name: "remember", type: "checkbox" });
  const coords = conventionSelect(stored ? stored.coords : loadPreferences().coords || "algebraic");
  const status = h("p", { class: "form-status", role: "alert", text: why });
  const button = h("button", { type: "submit", class: "primary", text: "Enter" });

  async function submit(event) {
    event.preventDefault();
    button.disabled = true;
    status.textContent = "Logging in…";
    status.classList.remove("error");
    try {
      savePreference("coords", coords.value);
      await app.session.login({ name: name.value.trim(), secret: secret.value, remember: remember.checked, coords: coords.value });
      done();
    } catch (error) {
      status.textContent = explain(error, name.value.trim());
      status.classList.add("error");
      button.disabled = false;
      if (error.code === "wrong_secret") secret.focus();
    }
  }

  replace(main, h("section", { class: "login" },
    h("form", { class: "card login-card", onsubmit: submit },
      h("h1", { text: "Play on Plyhall" }),
      h("p", { class: "hint", text: "Play people and bots at Connect Four, Santorini, Amazons, Magnetic Cave and Quarto, or watch and replay their games." }),
      field("Name", name),
      h("p", { class: "hint", id: "name-help", text: "Letters, digits and _ . - (up to 32)." }),
      field("Secret (optional)", secret),
      h("p", { class: "hint", id: "secret-help", text: "A claimed name needs its secret. With a new name, a secret claims it: nobody else can use it then." }),
      h("label", { class: "check" }, remember, " Remember the secret in this browser"),
      // a newcomer need not choose: squares are named as on a chess board (a1) unless they open this
      h("details", { class: "settings", open: coords.value !== "algebraic" },
        h("summary", { text: "Settings: how squares are named" }),
        field("Coordinates", coords),
        h("p", { class: "hint", text: "Letter and number as in chess (a1) unless you choose otherwise; bot authors of a course may want theirs. You can change it later in the menu under your name." })),
      h("div", { class: "buttons" }, button),
      status)));
  name.focus();
}

/** The identity menu in the header: who you are, claim the name, coordinates, log out. */
export function identityMenu(app) {
  const { session } = app;
  const me = session.me;
  const status = h("p", { class: "form-status", role: "status" });

  async function relogin(changes, success) {
    status.textContent = "…";
    try {
      await session.relogin(changes);
      status.textContent = success;
      app.refresh();
    } catch (error) {
      status.textContent = explain(error, me.name);
    }
  }

  const parts = [];
  if (!me.claimed) {
    const secret = h("input", { type: "password", name: "claim-secret", maxlength: "200", required: true, autocomplete: "new-password" });
    const remember = h("input", { type: "checkbox", name: "claim-remember" });
    parts.push(h("form", { class: "claim", onsubmit: (event) => {
      event.preventDefault();
      relogin({ secret: secret.value, remember: remember.checked }, `${me.name} is yours now.`);
    } },
    h("p", { class: "hint", text: `Anyone may use the name ${me.name} while you are away. Claim it with a secret to keep it.` }),
    field("Secret", secret),
    h("label", { class: "check" }, remember, " Remember it in this browser"),
    h("button", { type: "submit", text: "Claim the name" })));
  }
  const coords = conventionSelect(me.coords);
  coords.addEventListener("change", () => {
    savePreference("coords", coords.value);
    relogin({ coords: coords.value }, "Coordinates changed.");
  });
  parts.push(field("Coordinates", coords));
  parts.push(h("button", { type: "button", text: "Log out", onclick: () => { session.logout(); app.refresh(); } }));
  return h("details", { class: "identity" },
    h("summary", {}, h("span", { class: "me", text: me.name }), h("span", { class: "claimed", text: me.claimed ? "" : " (unclaimed)" })),
    h("div", { class: "menu" }, parts, status));
}
