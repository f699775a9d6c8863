/* Pieces both row-editor pages show around the editor: the banner, the merge
 * panel of a stale save, the transcript beside the list, the shortcut sheet,
 * and the keyboard. */
import { render } from "preact";
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { cls, fmtTime, html, typingIn } from "./lib.js";
import { describePath, valueView } from "./words.js";

export function Banner({ s, fixed }) {
  return html`${fixed ? html`<p class=${`banner ${fixed.kind || "info"}`} id="state-banner">${fixed.text}</p>` : null}
    ${s.banner
      ? html`<div id="banner" class=${`banner ${s.banner.kind}`} role="status">
          <span>${s.banner.text}</span>
          ${s.banner.actions.map((a) => html`<button type="button" class="link" key=${a.label} onClick=${a.run}>${a.label}</button>`)}
          <button type="button" class="link dismiss" title="dismiss" onClick=${() => s.clearBanner(true)}>✕</button>
        </div>`
      : null}`;
}

export function MergePanel({ s }) {
  const m = s.merge;
  if (!m || m.row !== s.row()) return null;
  const label = (k) => describePath(k);
  return html`<div class="merge-box" id="merge-box" role="alert">
    <h3>This row was changed elsewhere</h3>
    <p>${m.detail}</p>
    <table class="merge">
      <thead><tr><th>field</th><th>saved elsewhere (version ${m.theirs.version})</th><th>yours (not saved)</th></tr></thead>
      <tbody>
        ${m.keys.map(
          (k) => html`<tr key=${k}>
            <td>${label(k)}</td>
            <td><label><input type="radio" name=${`m-${k}`} checked=${m.choice[k] === "theirs"} onChange=${() => s.chooseInMerge(k, "theirs")} /> ${valueView(k, (m.theirs.content || {})[k])}</label></td>
            <td><label><input type="radio" name=${`m-${k}`} checked=${m.choice[k] === "mine"} onChange=${() => s.chooseInMerge(k, "mine")} /> ${valueView(k, m.mine[k])}</label></td>
          </tr>`
        )}
      </tbody>
    </table>
    <div class="editor-actions inline">
      <button type="button" class="primary" id="merge-save" onClick=${() => s.applyMerge()}>Save the merged row</button>
      <button type="button" id="merge-drop" onClick=${() => s.takeTheirs()}>Take the saved version, drop mine</button>
    </div>
  </div>`;
}

const TRANSCRIPT_KEY = "rescue:ws:transcript";

/** The transcript's cues beside the row list; the cues of the open row are marked and kept in view. */
export function Transcript({ s }) {
  const cues = s.data.cues || [];
  const [shown, setShown] = useState(localStorage.getItem(TRANSCRIPT_KEY) !== "hidden");
  const listRef = useRef(null);
  const r = s.row();
  const inRow = (c) => r && c.start < r.end_time && c.end > r.start_time;
  useLayoutEffect(() => {
    const first = listRef.current && listRef.current.querySelector("li.in-row");
    if (first) first.scrollIntoView({ block: "nearest" });
  }, [r && r.row_index, shown]);
  // A click on a line opens the row it belongs to (the row whose time span holds the line's start, else the nearest).
  const openCue = (c) => {
    let best = -1;
    let gap = Infinity;
    s.rows.forEach((row, i) => {
      // Inside the row's span counts 0; a line at a row's very end belongs to the next row, which starts there.
      const d = c.start < row.start_time ? row.start_time - c.start : c.start >= row.end_time ? c.start - row.end_time + 1e-6 : 0;
      if (d < gap) (gap = d), (best = i);
    });
    if (best >= 0 && best !== s.pos) s.open(best, { scroll: true, seek: "always" });
  };
  const toggle = () => {
    localStorage.setItem(TRANSCRIPT_KEY, shown ? "hidden" : "shown");
    setShown(!shown);
  };
  if (!cues.length) return null;
  return html`<aside class=${cls("ws-cues", !shown && "folded")} aria-label="Transcript">
    <button type="button" class="fold" id="toggle-transcript" aria-expanded=${shown} onClick=${toggle} title=${shown ? "hide the transcript" : "show the transcript"}>
      ${shown ? `Transcript (${cues.length}) ‹` : "Transcript ›"}
    </button>
    ${shown
      ? html`<ol id="cue-list" ref=${listRef}>
          ${cues.map((c) => html`<li key=${c.position} class=${inRow(c) ? "in-row" : ""} onClick=${() => openCue(c)} title="open this line's row">
            <span class="muted">${fmtTime(c.start)} </span>${c.speaker ? html`<b>${c.speaker}: </b>` : null}<span>${c.text}</span>
          </li>`)}
        </ol>`
      : null}
  </aside>`;
}

/** The shortcut sheet. keys: [[keys vnode, what it does]]. */
export function HelpOverlay({ s, title, intro, keys }) {
  const close = useRef(null);
  useEffect(() => {
    if (s.helpOpen && close.current) close.current.focus();
  }, [s.helpOpen]);
  if (!s.helpOpen) return null;
  return html`<div id="help" class="overlay" role="dialog" aria-modal="true" aria-labelledby="help-title" onClick=${(e) => e.target.id === "help" && s.toggleHelp(false)}>
    <div class="overlay-box">
      <h2 id="help-title">${title}</h2>
      ${intro}
      <table class="keys">${keys.map(([k, what], i) => html`<tr key=${i}><td>${k}</td><td>${what}</td></tr>`)}</table>
      <p class="muted">Single-letter keys work when the cursor is not in a text field.</p>
      <button type="button" id="close-help" ref=${close} onClick=${() => s.toggleHelp(false)}>Close</button>
    </div>
  </div>`;
}

/** The keyboard of both pages. `extra`: single keys a page adds ({key: () => ...}); `onEnter`: the one-key confirm. */
export function bindKeyboard(s, { extra = {}, onEnter = null } = {}) {
  document.addEventListener("keydown", (e) => {
    if (document.querySelector("dialog[open]")) return; // a confirmation is asked: it has the keyboard
    const inField = typingIn(e.target);
    const mod = e.ctrlKey || e.metaKey;
    if (mod && (e.key === "s" || e.key === "S")) {
      e.preventDefault();
      s.save({});
    } else if (mod && e.key === "Enter") {
      e.preventDefault();
      s.save({ next: true });
    } else if (e.altKey && e.key === "ArrowDown") {
      e.preventDefault();
      s.step(1);
    } else if (e.altKey && e.key === "ArrowUp") {
      e.preventDefault();
      s.step(-1);
    } else if (e.altKey && (e.key === "m" || e.key === "M" || e.code === "KeyM")) {
      e.preventDefault();
      s.markReviewed();
    } else if (e.altKey && /^Digit[1-6]$/.test(e.code)) {
      e.preventDefault();
      s.jumpTo(parseInt(e.code.slice(5), 10));
    } else if (e.key === "Escape") {
      if (s.helpOpen) s.toggleHelp(false);
      else if (s.picking) s.togglePicking(false);
      else if (inField) e.target.blur();
    } else if (e.key === "Enter" && onEnter && !inField && !mod && !e.altKey && !e.shiftKey) {
      // On a button or a link, Enter is that button's.
      if (e.target && e.target.closest && e.target.closest("button, a, summary")) return;
      e.preventDefault();
      onEnter();
    } else if (!inField && !mod && !e.altKey) {
      const actions = {
        j: () => s.step(1),
        k: () => s.step(-1),
        m: () => s.markReviewed(),
        p: () => s.player && s.player.togglePlay(),
        r: () => s.player && s.player.replay(s.row()),
        e: () => s.togglePicking(),
        "?": () => s.toggleHelp(true),
        l: () => s.openPicker(),
        g: () => s.openGuide(),
        ...extra,
      };
      if (/^[1-6]$/.test(e.key)) {
        e.preventDefault();
        s.jumpTo(parseInt(e.key, 10));
      } else if (actions[e.key]) {
        e.preventDefault();
        actions[e.key]();
      }
    }
  });
  window.addEventListener("beforeunload", () => {
    if (s.dirty) s.keepLocally();
  });
}

/** The document path of the editor field holding `el` (its nearest data-path), or null. */
function pathOf(el) {
  const host = el && el.closest ? el.closest("[data-path]") : null;
  return host ? host.getAttribute("data-path") : null;
}

/** The right-hand pane: the action bar, a merge panel when a save was stale, and the editor
 * (scrolled back to the top when another row opens). */
export function EditorPane({ s, label, bar, children }) {
  const pane = useRef(null);
  useLayoutEffect(() => {
    if (pane.current) pane.current.scrollTop = 0;
  }, [s.pos]);
  return html`<section class="ws-right" aria-label=${label} ref=${pane}>
    ${bar}
    <${MergePanel} s=${s} />
    <div id="editor" onfocusin=${(e) => s.fieldEntered(pathOf(e.target))}
      onfocusout=${(e) => s.fieldLeft(pathOf(e.target), e.relatedTarget && e.relatedTarget.closest("#editor") ? pathOf(e.relatedTarget) : null)}>${children}</div>
  </section>`;
}

/** Save (Ctrl+S) and save-and-next (Ctrl+Enter): the first two buttons of both pages' action bars. */
export function SaveButtons({ s }) {
  return html`<button type="button" id="save" onClick=${() => s.save({})} title="Ctrl+S">Save</button>
    <button type="button" id="save-next" onClick=${() => s.save({ next: true })} title="Ctrl+Enter">Save & next</button>`;
}

/** Open the row the address names (#row-N), else the first row shown, and draw the page into `hostId`. */
export function mountPage(s, App, hostId) {
  const wanted = parseInt((location.hash.match(/^#row-(\d+)$/) || [])[1], 10);
  const named = s.rows.findIndex((r) => r.row_index === wanted);
  const firstShown = Math.max(s.rows.findIndex((r) => s.visible(r)), 0);
  if (s.rows.length) s.open(named >= 0 ? named : firstShown, { scroll: true });
  const host = document.getElementById(hostId);
  host.replaceChildren();
  render(html`<${App} />`, host);
}
