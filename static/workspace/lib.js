/* Helpers shared by the annotator's workspace and the lead's adjudication page.
 *
 * Both pages render with Preact + htm (vendored ES modules, no build step):
 * `html` is htm bound to Preact's h. Every value from transcripts, coders or
 * the LLM goes into the page as text through htm, never as HTML.
 */
import { h } from "preact";
import { useEffect, useState } from "preact/hooks";
import htm from "htm";

export const html = htm.bind(h);
export const THERAPIST = "Therapist";

export const clone = (x) => (x === undefined ? undefined : JSON.parse(JSON.stringify(x)));
export const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
export const cls = (...names) => names.filter(Boolean).join(" ");

/** JSON with sorted object keys: imported documents may order nested keys differently. */
export function stable(v) {
  if (Array.isArray(v)) return `[${v.map(stable).join(",")}]`;
  if (v && typeof v === "object") return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${stable(v[k])}`).join(",")}}`;
  return JSON.stringify(v === undefined ? null : v);
}

export function fmtTime(t) {
  const m = Math.floor(t / 60);
  const s = (t - m * 60).toFixed(1).padStart(4, "0");
  return `${m}:${s}`;
}

export function readData(id = "workspace-data") {
  return JSON.parse(document.getElementById(id).textContent);
}

export function csrf() {
  const m = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
  return m ? decodeURIComponent(m[1]) : "";
}

/** A JSON request to the API: {status, json}; status 0 when the server could not be reached. */
export async function api(method, url, body) {
  let response;
  try {
    response = await fetch(url, {
      method,
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrf(), Accept: "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (e) {
    return { status: 0, json: { detail: "the server could not be reached" } };
  }
  let json = null;
  try {
    json = await response.json();
  } catch (e) {
    json = { detail: `the server answered ${response.status}` };
  }
  return { status: response.status, json };
}

/** A mutable model that components re-render from: `changed()` after every mutation. */
export class Store {
  constructor() {
    this.listeners = new Set();
  }
  subscribe(fn) {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }
  changed() {
    for (const fn of this.listeners) fn();
  }
}

/** Re-render the calling component whenever `store` says it changed (Preact batches the renders). */
export function useStore(store) {
  const [, setTick] = useState(0);
  useEffect(() => store.subscribe(() => setTick((t) => t + 1)), [store]);
  return store;
}

// Stable keys for list entries (objects), so that Preact keeps each entry's
// elements (and the focus in them) when entries are added, moved or removed.
const entryKeys = new WeakMap();
let nextEntryKey = 1;
export function keyOf(entry) {
  if (entry === null || typeof entry !== "object") return String(entry);
  if (!entryKeys.has(entry)) entryKeys.set(entry, `e${nextEntryKey++}`);
  return entryKeys.get(entry);
}

/** The form fields (not buttons) of `container`, in document order, that a person can type into or choose in. */
export function fieldsIn(container) {
  const selector = "input:not([type=hidden]):not([disabled]), select:not([disabled]), textarea:not([disabled]), button.picker-button:not([disabled])";
  return [...container.querySelectorAll(selector)].filter((el) => !el.closest(".picker-pop") && el.offsetParent !== null);
}

/** Move the focus to the first field after `element` (used after a label is chosen). */
export function focusFieldAfter(element, container) {
  if (!element || !container) return;
  const fields = fieldsIn(container);
  const own = element.closest(".picker") || element;
  const next = fields.find((el) => !own.contains(el) && own.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING);
  if (next) next.focus();
}

/** Is the keyboard event typed into a field (so single-letter shortcuts must not fire)? */
export function typingIn(target) {
  return !!target && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName));
}
