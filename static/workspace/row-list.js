/* The row list: the conversation itself. Each row shows its words (clamped to
 * two lines), who speaks to whom, its status, a mark when it carries a relation
 * pattern, and a mark when the open row cites it as evidence. While evidence is
 * being picked, a click cites a row instead of opening it. Rows only re-render
 * when what they show changes.
 *
 * Nothing in the list moves under the pointer: every row has the same height
 * whatever its focus, hover or marks (a click whose mouse-down moved the rows
 * would land its mouse-up on another row and open nothing). The whole turn of
 * the row under the pointer (or of the open row) is read in the fixed strip
 * below the list, never in a box over the neighbouring rows. */
import { Component, Fragment } from "preact";
import { useLayoutEffect, useState } from "preact/hooks";
import { cls, fmtTime, html } from "./lib.js";
import { stateWords } from "./words.js";

function shallowEqual(a, b) {
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every((k) => a[k] === b[k]);
}

class RowItem extends Component {
  shouldComponentUpdate(next) {
    return !shallowEqual(this.props, next);
  }
  render(p) {
    return html`<tr id=${`row-${p.index}`} class=${cls(p.current && "current", p.playing && "playing", p.cited && "cited", p.picking && "pickable")} tabindex="-1"
      aria-current=${p.current ? "true" : undefined} onClick=${() => p.onPick(p.pos)}>
      <td class="num"><b>${p.index}</b><span class="time">${p.time}</span></td>
      <td class="who"><span class="who-text"><b>${p.speaker}</b> → ${p.targets}</span></td>
      <td class="words-cell"><span class="words">${p.words}</span></td>
      <td class="status-cell">
        <span class=${`chip chip-${p.status}`}>${p.statusText}</span>
        <span class="markers">
          ${p.pattern !== null ? html`<span class="marker pattern" title=${`relation pattern: ${p.pattern}`}>◆</span>` : null}
          ${p.cited ? html`<span class="marker cited" title=${`evidence for row ${p.citedBy}`}>cited</span>` : null}
          ${p.extraText ? html`<span class=${`marker ${p.extraClass || ""}`} title=${p.extraTitle}>${p.extraText}</span>` : null}
          ${p.warnings ? html`<span class="marker warn" title=${`${p.warnings} warning(s)`}>⚠</span>` : null}
          ${p.commented ? html`<span class="marker note" title="has comments">✎</span>` : null}
        </span>
      </td>
    </tr>`;
  }
}

/** Scroll the list box so that row `el` is wholly in view, below the sticky header (never under it) and above the
 * bottom edge; nothing moves when it already is. */
function keepInView(el) {
  const box = el.closest(".row-list-wrap");
  if (!box) return;
  const head = box.querySelector("thead");
  const top = box.getBoundingClientRect().top + (head ? head.getBoundingClientRect().height : 0) + (box.querySelector(".picking-note") ? box.querySelector(".picking-note").offsetHeight : 0);
  const bottom = box.getBoundingClientRect().top + box.clientHeight;
  const r = el.getBoundingClientRect();
  if (r.top < top) box.scrollTop -= top - r.top;
  else if (r.bottom > bottom) box.scrollTop += r.bottom - bottom;
}

/** The whole turn of the row under the pointer, else of the open row: a strip of fixed height below the list. */
function RowWords({ s, hovered }) {
  const r = hovered !== null ? s.rows.find((x) => x.row_index === hovered) : s.row();
  return html`<div class="row-words" id="row-words" aria-live="off">
    ${r ? html`<span class="muted">Row ${r.row_index}${r === s.row() ? " (open)" : ""} · </span><b>${r.primary_speaker}:</b> ${r.dialogue_cleaned || "(no words)"}` : null}
  </div>`;
}

/** describe(r) -> {statusText, status, extra: {text, title, className}, warnings} from the page. */
export function RowList({ s, describe, emptyText }) {
  const current = s.row();
  const [relKey, , evidenceKey] = current ? current.relation_keys : [];
  const cited = new Set(current ? (s.working[evidenceKey] || []).filter((n) => Number.isInteger(n)) : []);
  const playing = s.player ? s.player.playingIndex : null;
  const [hovered, setHovered] = useState(null);
  const hover = (e) => {
    const tr = e.target.closest && e.target.closest("tr[id^='row-']");
    const index = tr ? parseInt(tr.id.slice(4), 10) : null;
    if (index !== hovered) setHovered(index);
  };
  useLayoutEffect(() => {
    if (s.scrollToRow === null) return;
    const el = document.getElementById(`row-${s.scrollToRow}`);
    if (el) keepInView(el);
    s.scrollToRow = null;
  });
  const items = [];
  s.rows.forEach((r, pos) => {
    if (!s.visible(r)) return;
    const content = pos === s.pos ? s.working : s.baseContent(r) || {};
    const [key] = r.relation_keys;
    const label = content[pos === s.pos ? relKey : key];
    const status = s.status(r);
    const d = describe ? describe(r, status) : {};
    items.push(html`<${RowItem} key=${r.row_index} pos=${pos} index=${r.row_index} time=${fmtTime(r.start_time)} speaker=${r.primary_speaker}
      targets=${(content.target || []).join(", ")} words=${r.dialogue_cleaned || "(no words)"} current=${pos === s.pos} playing=${playing === r.row_index}
      cited=${cited.has(r.row_index)} citedBy=${current && cited.has(r.row_index) ? current.row_index : null} picking=${s.picking}
      pattern=${label ? label : null} status=${status} statusText=${d.statusText || stateWords(status)}
      extraText=${d.extra ? d.extra.text : null} extraTitle=${d.extra ? d.extra.title : null} extraClass=${d.extra ? d.extra.className : null}
      warnings=${d.warnings || 0} commented=${!!r.commented} onPick=${s.clickRow} />`);
  });
  return html`<${Fragment}><div class="row-list-wrap">
    ${s.picking
      ? html`<div class="picking-note" role="status">Picking evidence for row ${current.row_index}: click rows to cite them or take them out.
          <button type="button" class="link" onClick=${() => s.togglePicking(false)}>Done</button></div>`
      : null}
    <table class=${cls("row-list", s.picking && "picking")} id="row-list" aria-label="Rows">
      <thead><tr><th>#</th><th>Who</th><th>Words</th><th>Status</th></tr></thead>
      <tbody onMouseOver=${hover} onMouseLeave=${() => setHovered(null)}>
        ${items.length ? items : html`<tr class="no-rows"><td colspan="4" class="empty">${emptyText || "No rows."}</td></tr>`}
      </tbody>
    </table>
  </div>
  <${RowWords} s=${s} hovered=${hovered} /></${Fragment}>`;
}
