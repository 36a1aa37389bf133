// @ts-check
/** Small DOM helpers. Text always goes in as text: nothing a person typed is ever parsed as HTML. */

const PROPERTIES = new Set(["value", "checked", "disabled", "selected", "hidden", "open"]);

/**
 * An element: `h("button", {class: "primary", onclick: go}, "Play")`.
 * Props: `class`, `text`, `on<event>` handlers, the DOM properties above, and any other
 * attribute (`aria-*`, `data-*`, ...). Null, undefined and false props are left out.
 * Children: elements, strings (as text) or arrays of them; null and false are skipped.
 */
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") el.className = value;
    else if (key === "text") el.textContent = value;
    else if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (PROPERTIES.has(key)) el[key] = value;
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  append(el, children);
  return el;
}

/** Append children (elements, strings as text, nested arrays) to `el`. */
export function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** Set the text of `el` only when it changes (live regions announce every change). */
export function setText(el, text) {
  if (el.textContent !== text) el.textContent = text;
}

/** Replace the children of `el`. */
export function replace(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

/**
 * Put one of the page's own SVG drawings (pieces, levels) into `el`. The markup comes
 * from the game modules, built from numbers and constants only, never from messages.
 */
export function drawInto(el, markup) {
  if (el.dataset.drawn !== markup) {
    el.innerHTML = markup;
    el.dataset.drawn = markup;
  }
}

/** Rebuild `element` only when `key` changed, so a button keeps the keyboard focus while others move. */
export function keyed(element, key, build) {
  if (element.dataset.key === key) return;
  element.dataset.key = key;
  element.replaceChildren();
  build();
}

let fieldCount = 0;

/** A form field: a label (tied to the control by its id) above the control. */
export function field(text, control) {
  if (!control.id) control.id = `field-${++fieldCount}`;
  return h("div", { class: "field" }, h("label", { for: control.id, text }), control);
}

/**
 * Scroll `list` (a scrolling box) so that `item` shows, without scrolling the page itself (scrollIntoView would
 * move the whole page on a phone, where the list sits below the board).
 * @param {Element} list
 * @param {Element} item
 */
export function scrollWithin(list, item) {
  const box = list.getBoundingClientRect();
  const at = item.getBoundingClientRect();
  if (at.top < box.top) list.scrollTop -= box.top - at.top;
  else if (at.bottom > box.bottom) list.scrollTop += at.bottom - box.bottom;
  if (at.left < box.left) list.scrollLeft -= box.left - at.left; // a list laid out in one strip (a phone's replay)
  else if (at.right > box.right) list.scrollLeft += at.right - box.right;
}
