/* The lead's adjudication page: the row filters, the table that sets the LLM
 * draft and every coder side by side (disputed fields marked, a "take" per
 * source and field, a note per decision), and below it the shared row editor
 * (static/workspace/row-editor.js) editing the row's gold.
 *
 * Gold is empty until the lead decides: a field without a decision shows the
 * suggestion (the value every coder gave, or a strict majority's), styled as a
 * suggestion, with "accept" beside it; `a` (or the button) accepts every
 * suggestion of the row and opens the next one. Only coded work counts (the
 * agreement report's rule): a coder who has not submitted is shown greyed as
 * "not coded yet" and never votes. The LLM draft never decides: where the
 * coders split there is no suggestion, and taking the draft's value asks why. */
import { useState } from "preact/hooks";
import { api, cls, csrf, html, readData, same, stable, useStore } from "../workspace/lib.js";
import { confirmStep } from "../workspace/dialog.js";
import { MediaPanel, Player } from "../workspace/media.js";
import { Banner, EditorPane, HelpOverlay, SaveButtons, bindKeyboard, mountPage } from "../workspace/panels.js";
import { RowEditor } from "../workspace/row-editor.js";
import { RowList } from "../workspace/row-list.js";
import { EditorSession } from "../workspace/session.js";
import { setStateWords, stateWords, valueView } from "../workspace/words.js";

const data = readData();
setStateWords(data.config.state_words);
const FIELDS = data.fields; // [{name, title, keys}]
/** A field as the page labels it (``tone_of_voice`` -> ``Tone of voice``). */
const fieldTitle = (name) => (FIELDS.find((f) => f.name === name) || { title: name }).title;
const CODERS = data.coders.map((c) => c.username);
const READY = data.readiness || { ready: true };
const filters = { ...data.filters };
const pendingNotes = {}; // row_id -> {field: note}, sent with the next decision on that field
const ALL_FIELDS_KEY = "rescue:adj:all-fields";
const SIMILARITY = data.similarity || { status: "unavailable" };
let threshold = SIMILARITY.threshold || 0.8;
let sentNotes = [];

// ---------------------------------------------------------------- values
function fieldValue(content, f) {
  if (!content) return undefined;
  if (f.name === "relation_pattern") {
    const out = {};
    for (const k of f.keys) if (k in content) out[k] = content[k];
    return out;
  }
  return content[f.name];
}
const comparable = (f, v) => (f.name === "target" && Array.isArray(v) ? [...v].sort() : v);
const sameField = (f, a, b) => stable(comparable(f, a)) === stable(comparable(f, b));
const decisions = (r) => (r.gold && r.gold.decisions) || {};
const undecided = (r) => r.disputed.filter((name) => !decisions(r)[name]);
const adjudicated = (r) => r.gold.version > 0 && undecided(r).length === 0;
const url = (name, r) => data.endpoints[name].replace("{row}", r.row_id);
const fieldOf = (keys) => FIELDS.find((f) => f.keys.some((k) => keys.includes(k)));

// ---------------------------------------------------------------- filters
function labelMatches(labels, wanted) {
  if (wanted.includes(":")) return labels.includes(wanted);
  return labels.some((used) => used.split(":")[1] === wanted);
}
function rowVisible(r) {
  if (filters.disagreements && !r.disputed.length) return false;
  if (filters.open && adjudicated(r)) return false;
  if (filters.field && !r.disputed.includes(filters.field)) return false;
  if (filters.label && !labelMatches(r.labels, filters.label)) return false;
  if (filters.annotator) {
    const names = filters.field && r.disputed.includes(filters.field) ? [filters.field] : r.disputed;
    if (!names.some((name) => (r.outliers[name] || []).includes(filters.annotator))) return false;
  }
  return true;
}
function filterQuery() {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(filters)) if (v) q.set(k, v === true ? "1" : v);
  const text = q.toString();
  return text ? `?${text}` : "";
}

// ---------------------------------------------------------------- order by disagreement
// The score (annotation/adjudication/disagreement.py): mean over the row's fields of the coders' label
// entropy and the distance between their texts; 0 every coder agrees, 1 every field differs.
const score = (r) => (r.disagreement ? r.disagreement.score : 0);
function applyOrder(order) {
  const current = s.rows.length ? s.row() : null;
  if (order === "disputed") s.rows.sort((a, b) => score(b) - score(a) || a.row_index - b.row_index);
  else s.rows.sort((a, b) => a.row_index - b.row_index);
  if (current) s.pos = s.rows.indexOf(current);
  s.changed();
}
/** `d`: open the most disputed row still open (not adjudicated, shown by the filters), other than this one. */
function nextMostDisputed() {
  const current = s.rows.length ? s.row() : null;
  const open = s.rows.filter((r) => r !== current && rowVisible(r) && !adjudicated(r) && score(r) > 0);
  if (!open.length) return s.setBanner("No other row with a disagreement is left open.", "info");
  const best = open.reduce((a, b) => (score(b) > score(a) || (score(b) === score(a) && b.row_index < a.row_index) ? b : a));
  s.open(s.rows.indexOf(best), { scroll: true, seek: "paused" });
}

// ---------------------------------------------------------------- the session
const s = new EditorSession(data, {
  doc: "gold",
  docTitle: "gold",
  readOnly: !data.clip.editable,
  compareToDraft: false,
  canComment: false,
  urls: { save: (r) => url("save", r), validate: (r) => url("validate", r) },
  storageKey: (r) => `${data.storage_prefix}${r.row_id}`,
  baseContent: (r) => r.gold.content || r.gold.suggestion.content,
  rowVisible,
  // A note travels with a save only where the save decides something (the field
  // changed) or the field is already decided; on an open field it waits for the
  // take, so that typing a note never decides silently.
  saveBody(r, body) {
    const notes = pendingNotes[r.row_id] || {};
    const send = {};
    const before = r.gold.content || r.gold.suggestion.content;
    for (const f of FIELDS) {
      if (!(f.name in notes)) continue;
      if (decisions(r)[f.name] || !sameField(f, fieldValue(body.content, f), fieldValue(before, f))) send[f.name] = notes[f.name];
    }
    if (Object.keys(send).length) body.notes = send;
    sentNotes = Object.keys(send);
  },
  afterSave(r) {
    for (const name of sentNotes) delete (pendingNotes[r.row_id] || {})[name];
    sentNotes = [];
  },
});
new Player(s, data.settings);

async function take(r, f, source) {
  let note = (pendingNotes[r.row_id] || {})[f.name];
  if (source === "draft") {
    // The draft is the model's reading, not a coder's: taking it is a decision the lead must explain.
    const why = await confirmStep({
      title: `Take the LLM draft's ${f.title.toLowerCase()} for row ${r.row_index}?`,
      lines: [
        "The draft is the model's reading, not a coder's. Taking it records the draft as the source of this gold value, with your reason; the release counts such values apart.",
      ],
      confirmLabel: "Take the draft's value",
      reason: { label: "Why is the draft right here where the coders are not?", placeholder: "e.g. the words are a disclosure before the request; both coders read only the request" },
    });
    if (!why) return;
    note = why;
  }
  const res = await api("POST", url("decide", r), { field: f.name, source, version: r.gold.version, note: note === undefined ? null : note });
  if (res.status === 200) {
    if (pendingNotes[r.row_id]) delete pendingNotes[r.row_id][f.name];
    s.clearBanner();
    s.adopt(r, res.json, f.keys);
  } else if (res.status === 409 && res.json.current) {
    s.adopt(r, res.json.current, []);
    s.setBanner("This row's gold was changed elsewhere; its current version is loaded. Take the value again if you still want it.", "warn");
  } else s.setBanner(res.json.detail || `Not taken (the server answered ${res.status}).`, "error");
}

async function saveNote(r, f, text) {
  if (!decisions(r)[f.name]) {
    pendingNotes[r.row_id] = { ...(pendingNotes[r.row_id] || {}), [f.name]: text };
    return;
  }
  if ((decisions(r)[f.name].note || "") === text) return;
  const res = await api("POST", url("decide", r), { field: f.name, source: "gold", version: r.gold.version, note: text });
  if (res.status === 200) s.adopt(r, res.json, []);
  else s.setBanner(res.json.detail || `Note not saved (the server answered ${res.status}).`, "error");
}

/** Accept the suggestion of `fields` (default: every field not decided yet); `next`: then open the next row shown. */
async function acceptSuggestion(r, fields, { next = false } = {}) {
  if (s.readOnly) return;
  const wanted = fields || FIELDS.filter((f) => !decisions(r)[f.name] && r.gold.suggestion.fields[f.name]).map((f) => f.name);
  if (wanted.length) {
    if (r === s.row() && s.dirty && !(await s.save({}))) return; // the lead's own edits are decisions too: they go first
    const res = await api("POST", url("accept", r), { version: r.gold.version, fields: wanted });
    if (res.status === 200) {
      s.clearBanner();
      s.adopt(r, res.json, FIELDS.filter((f) => wanted.includes(f.name)).flatMap((f) => f.keys));
    } else if (res.status === 409 && res.json.current) {
      s.adopt(r, res.json.current, []);
      return s.setBanner("This row's gold was changed elsewhere; its current version is loaded. Accept again if you still want the suggestion.", "warn");
    } else return s.setBanner(res.json.detail || `Not accepted (the server answered ${res.status}).`, "error");
  }
  if (next) s.step(1);
}

// ---------------------------------------------------------------- how a decision reads
function decisionText(d) {
  const source = { edit: "edited", confirmed: "kept as it was", unanimous: "unanimous", draft: "taken from the draft" }[d.source] || `taken from ${d.source}`;
  const also = (d.same_as || []).filter((x) => x !== d.source);
  return `${source}${also.length ? ` (= ${also.join(", ")})` : ""} · ${d.by}`;
}
const SUGGESTION_WORDS = { unanimous: "every coder", majority: "majority", single: "the only coder whose work counts" };

function relationView(r, v) {
  const [labelKey, reasonKey, evidenceKey] = r.relation_keys;
  if (!v) return html`<span class="none">—</span>`;
  const label = v[labelKey];
  const head = label === null || label === undefined ? "not annotated" : label === "" ? "no clear pattern" : label;
  const evidence = v[evidenceKey] || [];
  return html`<span><b class=${label ? "" : "none"}>${head}</b>${v[reasonKey] ? html`<span class="reason"> — ${v[reasonKey]}</span>` : null}${evidence.length ? html`<span class="evidence"> [rows ${evidence.join(", ")}]</span>` : null}</span>`;
}
function shown(f, v, r) {
  if (v === undefined) return html`<span class="none">—</span>`;
  if (f.name === "relation_pattern") return relationView(r, v);
  if ((f.name === "utterance_type" || f.name === "tone_of_voice") && !v) return html`<span class="none">—</span>`;
  return valueView(f.name, v);
}
// A username may break after "_", "." or "-" (long names in narrow columns).
const breakable = (name) => name.split(/(?<=[_.-])/).flatMap((part, i) => (i ? [html`<wbr />`, part] : [part]));

// ---------------------------------------------------------------- the table
function GoldCell({ r, f, disputed }) {
  const d = decisions(r)[f.name];
  const editable = !s.readOnly;
  const suggestion = r.gold.suggestion.fields[f.name];
  const note = (pendingNotes[r.row_id] || {})[f.name] ?? (d ? d.note || "" : "");
  const [typed, setTyped] = useState(null);
  // Notes belong to decisions: on disputed fields, and wherever the lead changed the value.
  const wantsNote = disputed || (d && (d.source === "edit" || d.note));
  return html`<td class=${cls("gold", !d && "undecided")}>
    ${d
      ? html`<div class="val">${shown(f, fieldValue(r.gold.content, f), r)}</div><div class="decision">${decisionText(d)}</div>`
      : suggestion
        ? html`<div class="suggestion" title="a suggestion, not gold yet">
            <span class="suggestion-kind">suggested · ${SUGGESTION_WORDS[suggestion.kind]}</span>
            <div class="val">${shown(f, fieldValue(r.gold.suggestion.content, f), r)}</div>
            ${editable ? html`<button type="button" class="accept" data-field=${f.name} onClick=${() => acceptSuggestion(r, [f.name])}>accept</button>` : null}
          </div>`
        : html`<div class="none open-field">open: the coders split; take a coder's value or edit it below</div>`}
    ${wantsNote
      ? html`<input type="text" class="decision-note" placeholder="note…" title="A note that goes with the decision" aria-label=${`note on ${f.title}`}
          value=${typed !== null ? typed : note} disabled=${!editable} data-field=${f.name}
          onInput=${(e) => setTyped(e.currentTarget.value)}
          onChange=${(e) => {
            setTyped(null);
            saveNote(r, f, e.currentTarget.value.trim());
          }}
          onKeyDown=${(e) => {
            if (e.key === "Enter") {
              e.preventDefault();
              e.currentTarget.blur();
            }
          }} />`
      : null}
  </td>`;
}

function CompareTable({ r }) {
  const [showAll, setShowAll] = useState(localStorage.getItem(ALL_FIELDS_KEY) === "1");
  const disputed = new Set(r.disputed);
  const open = new Set(undecided(r));
  const rowsShown = FIELDS.filter((f) => showAll || disputed.has(f.name));
  const coded = CODERS.filter((c) => r.coders[c]);
  const uncoded = CODERS.filter((c) => (r.uncoded || {})[c]);
  const sources = [...coded.map((c) => [c, c, r.coders[c].content]), ...(r.draft ? [["draft", "LLM draft", r.draft.content]] : [])];
  const headline = !CODERS.length
    ? "No coder is assigned to this clip."
    : !coded.length
      ? "No coder's work on this row counts yet: nothing is compared until they submit."
      : disputed.size
        ? `${disputed.size} disputed field${disputed.size > 1 ? "s" : ""}, ${open.size} still open`
        : "Every coder gave the same annotation.";
  const toggle = (e) => {
    const on = e.currentTarget.checked;
    localStorage.setItem(ALL_FIELDS_KEY, on ? "1" : "0");
    setShowAll(on);
  };
  return html`<section class="compare" id="compare" aria-label="Sources side by side">
    <div class="compare-head">
      <h3>Sources side by side</h3>
      <span class="muted">${headline}</span>
      ${!r.gold.id ? html`<span class="chip chip-new" title="nothing of this row is gold until you take, accept or save">no gold yet: the editor below shows the suggestion (dashed)</span>` : null}
      <label class="check all-fields"><input type="checkbox" id="show-all-fields" checked=${showAll} onChange=${toggle} /> all fields</label>
    </div>
    ${rowsShown.length
      ? html`<div class="compare-wrap"><table class="compare-table">
          <thead><tr><th class="f">Field</th>${sources.map(([id, title]) =>
            id === "draft"
              ? html`<th key=${id} class="draft" title="The LLM's pre-annotation: shown for comparison, never a vote or a suggestion">${title}<small class="draft-note">the model's, not a coder</small></th>`
              : html`<th key=${id} title=${title}>${breakable(title)}</th>`)}
            ${uncoded.map((c) => html`<th key=${`u-${c}`} class="uncoded" title=${`${c}: ${r.uncoded[c].words}; their values are not compared or counted`}>${breakable(c)}<small class="draft-note">${r.uncoded[c].words}</small></th>`)}
            <th class="gold">Gold</th></tr></thead>
          <tbody>
            ${rowsShown.map((f) => {
              const d = decisions(r)[f.name];
              const goldValue = d ? fieldValue(r.gold.content, f) : undefined;
              const isOpen = open.has(f.name);
              return html`<tr key=${f.name} class=${cls(disputed.has(f.name) && "disputed", isOpen && "open")} data-field=${f.name}>
                <th scope="row" class="f">${f.title}${disputed.has(f.name) ? html`<span class=${`chip ${isOpen ? "chip-open" : "chip-decided"}`}>${isOpen ? "open" : "decided"}</span>` : null}</th>
                ${sources.map(([id, , content]) => {
                  const value = fieldValue(content, f);
                  const inGold = d ? sameField(f, value, goldValue) : false;
                  // Green marks the value the gold holds, only where there was a choice to make.
                  const chosen = inGold && disputed.has(f.name);
                  const outvoted = id !== "draft" && (r.outliers[f.name] || []).includes(id);
                  // A take is offered where it decides something: an undecided disputed field, or a value that differs from the gold.
                  const offer = !s.readOnly && (d ? !inGold : disputed.has(f.name));
                  return html`<td key=${id} class=${cls("src", id === "draft" && "draft", chosen && "chosen", outvoted && "outvoted")} data-source=${id}>
                    <div class="val">${shown(f, value, r)}</div>
                    ${offer
                      ? html`<button type="button" class="take" title=${id === "draft" ? "Take the LLM draft's value as the gold (you will be asked why)" : `Use ${id}'s value as the gold`} data-field=${f.name} data-source=${id}
                          onClick=${() => take(r, f, id)}>${id === "draft" ? "take…" : "take"}</button>`
                      : null}
                  </td>`;
                })}
                ${uncoded.map((c) => html`<td key=${`u-${c}`} class="src uncoded" data-uncoded=${c}><span class="none">not coded yet</span></td>`)}
                <${GoldCell} r=${r} f=${f} disputed=${disputed.has(f.name)} />
              </tr>${disputed.has(f.name) ? html`<${SimilarityRow} r=${r} f=${f} span=${sources.length + uncoded.length + 2} />` : null}`;
            })}
          </tbody>
        </table></div>`
      : null}
  </section>`;
}

/** Under a disputed free-text field: each pair of coders' texts and how similar they are (1 − distance). */
function SimilarityRow({ r, f, span }) {
  const units = ((r.disagreement && r.disagreement.texts) || {})[f.name] || [];
  const differing = units.filter((u) => u.pairs.some((p) => p.similarity !== 1));
  if (!differing.length) return null;
  const pct = (x) => (x === null ? "not embedded yet" : x.toFixed(2));
  return html`<tr class="similarity-row" data-field=${f.name}><td colspan=${span}>
    ${differing.map((u) => html`<div class="similarity" key=${u.field + u.about}>
      <span class="muted">${u.label}${u.about ? ` · ${u.about}` : ""}:</span>
      <span class="texts">${Object.entries(u.texts).map(([c, t]) => html`<span class="text" key=${c}><b>${c}</b> ${t ? html`“${t}”` : html`<i class="none">nothing</i>`}</span>`)}</span>
      <span class="pairs">similarity ${u.pairs.map((p) => html`<span class="pair" key=${p.a + p.b} title=${`1 − distance between ${p.a}'s and ${p.b}'s texts`}>${p.a}–${p.b} <b>${pct(p.similarity)}</b></span>`)}</span>
    </div>`)}
    <div class="muted hint">Take one text above, then edit it in the gold editor below to merge the coders' words, or type a new one there: the decision is recorded when you save.</div>
  </td></tr>`;
}

/** Marks in the gold editor: disputed fields, and what is only a suggestion so far. */
function decorate(keys) {
  const r = s.row();
  const f = fieldOf(keys);
  if (!f) return {};
  const decided = !!decisions(r)[f.name];
  const base = r.gold.content || r.gold.suggestion.content;
  const edited = keys.some((k) => !same(s.working[k], base[k]));
  const disputed = r.disputed.includes(f.name);
  const className = cls(disputed && "disputed", disputed && !decided && "open", !decided && !edited && "suggested", edited && "changed");
  const badges = edited ? html`<span class="badge">your edit, not saved</span>` : null;
  return { className, badges };
}

function describeRow(r, status) {
  const out = {};
  if (!["saving", "failed", "unsaved"].includes(status)) {
    const left = undecided(r).length;
    out.statusText = left ? `${left} open` : r.gold.version > 0 ? "decided" : r.unanimous ? "to accept" : "no gold";
  }
  if (r.disputed.length) {
    const titles = r.disputed.map((name) => FIELDS.find((f) => f.name === name).title);
    const d = r.disagreement ? ` · ${r.disagreement.score.toFixed(2)}` : "";
    out.extra = { text: `≠${r.disputed.length}${d}`, title: `coders disagree on: ${titles.join(", ")}${d ? `; disagreement score ${d.slice(3)} (0 all agree, 1 every field differs)` : ""}`, className: "dispute" };
  }
  out.warnings = (r.gold.warnings || []).length;
  return out;
}

// ---------------------------------------------------------------- clip-level actions
/** A form posted to the server (a page reload with a message), keeping the filters and the open row. */
function ClipForm({ action, id, label, className, disabled, title, ask, hidden = {} }) {
  const submit = async (e) => {
    e.preventDefault();
    const form = e.currentTarget;
    if (ask && !(await ask())) return;
    form.action = action + filterQuery();
    form.querySelector("input[name=row]").value = s.rows.length ? String(s.row().row_index) : "";
    form.submit();
  };
  return html`<form method="post" action=${action} class="clip-action" onSubmit=${submit}>
    <input type="hidden" name="csrfmiddlewaretoken" value=${csrf()} />
    <input type="hidden" name="row" value="" />
    ${Object.entries(hidden).map(([k, v]) => html`<input type="hidden" key=${k} name=${k} value=${v} />`)}
    <button type="submit" id=${id} class=${className} disabled=${disabled} title=${title}>${label}</button>
  </form>`;
}

const listRows = (rows) => rows.slice(0, 15).map((r) => r.row_index).join(", ") + (rows.length > 15 ? "…" : "");

function askAcceptUnanimous() {
  const rows = s.rows.filter((r) => r.unanimous && !r.gold.id);
  return confirmStep({
    title: `Accept ${rows.length} unanimous row${rows.length === 1 ? "" : "s"} as gold?`,
    lines: [
      `Rows ${listRows(rows)}: every coder gave the same annotation, and it becomes the gold as it is, each field recorded as a unanimous decision by you.`,
      "There is no undo: changing one of these rows afterwards is an edit of its gold, recorded as your decision.",
    ],
    confirmLabel: `Accept ${rows.length} row${rows.length === 1 ? "" : "s"}`,
  });
}

function askMarkAdjudicated() {
  const missing = s.rows.filter((r) => !r.gold.id);
  const open = s.rows.filter((r) => r.gold.id && undecided(r).length);
  if (missing.length || open.length) {
    const parts = [];
    if (missing.length) parts.push(`${missing.length} row(s) have no gold (rows ${listRows(missing)})`);
    if (open.length) parts.push(`${open.length} row(s) have disagreements not decided yet (rows ${listRows(open)})`);
    s.setBanner(`Not ready to mark adjudicated: ${parts.join("; ")}.`, "error");
    return Promise.resolve(false);
  }
  const all = s.rows.flatMap((r) => Object.values(decisions(r)));
  const unanimous = all.filter((d) => d.source === "unanimous").length;
  return confirmStep({
    title: `Mark ${data.clip.sample_id} adjudicated?`,
    lines: [
      `Its ${s.rows.length} rows of gold become final: ${all.length - unanimous} field decision(s) taken, accepted or edited by a lead, ${unanimous} unanimous.`,
      "The gold can no longer change; only a re-review request reopens the clip. It goes into the next release frozen from this project.",
    ],
    confirmLabel: "Mark adjudicated",
  });
}

async function askAcceptAgreeing() {
  const res = await api("GET", `${data.urls.agreeing}?threshold=${threshold}`);
  if (res.status !== 200) {
    s.setBanner(res.json.detail || `No preview (the server answered ${res.status}).`, "error");
    return false;
  }
  const p = res.json;
  if (!p.rows.length) {
    s.setBanner(`No row without gold has coders who agree within similarity ${threshold.toFixed(2)}${p.similarity.missing ? ` (${p.similarity.missing} texts are not embedded yet and never count as agreeing)` : ""}.`, "info");
    return false;
  }
  const near = p.rows.filter((r) => r.near.length);
  return confirmStep({
    title: `Accept ${p.rows.length} row${p.rows.length === 1 ? "" : "s"} whose coders agree within similarity ${threshold.toFixed(2)}?`,
    lines: [
      `${p.unanimous} row${p.unanimous === 1 ? "" : "s"} where every coder gave the same annotation, and ${p.near} where they differ only in texts at least ${threshold.toFixed(2)} similar to each other (rows ${listRows(near.length ? near : p.rows)}).`,
      near.length
        ? `For those, each differing field takes the text of the coder closest to the others' (${near.slice(0, 3).map((r) => `row ${r.row_index}: ${Object.entries(r.fields).filter(([f]) => r.near.includes(f)).map(([f, c]) => `${fieldTitle(f)} from ${c}`).join(", ")}`).join("; ")}${near.length > 3 ? "; …" : ""}), recorded as taken from that coder with the threshold in the note.`
        : "Every field becomes gold as the coders gave it, recorded as a unanimous decision by you.",
      "There is no undo: changing one of these rows afterwards is an edit of its gold, recorded as your decision.",
    ],
    confirmLabel: `Accept ${p.rows.length} row${p.rows.length === 1 ? "" : "s"}`,
  });
}

function AgreeingControl() {
  const [value, setValue] = useState(threshold);
  return html`<span class="agreeing" title="Rows without gold whose coders agree on every label and whose texts are at least this similar (1 − distance)">
    <label for="agree-threshold">texts at least this similar</label> <input type="number" id="agree-threshold" min="0.5" max="1" step="0.05" value=${value}
      onInput=${(e) => { const v = parseFloat(e.currentTarget.value); if (v >= 0.5 && v <= 1) { threshold = v; setValue(v); } }} />
    <${ClipForm} action=${data.urls.accept_agreeing} id="accept-agreeing" ask=${askAcceptAgreeing} hidden=${{ threshold: String(value) }}
      title="Preview, then accept the rows whose coders agree within this similarity" label="Accept agreeing rows…" />
  </span>`;
}

function Header() {
  const clip = data.clip;
  const done = s.rows.filter(adjudicated).length;
  const left = s.rows.reduce((n, r) => n + undecided(r).length, 0);
  const unanimousLeft = s.rows.filter((r) => r.unanimous && !r.gold.id).length;
  return html`<header class="ws-head">
    <div>
      <p class="crumbs"><a href=${data.urls.index}>Adjudication · ${data.project_name}</a></p>
      <h1>${clip.sample_id}</h1>
      <p class="muted">${clip.scenario === "family" ? "Family" : "Couple"} · ${clip.participants.join(", ")} · <span class=${`state state-${clip.state}`} id="clip-state">${stateWords(clip.state)}</span>
        · coders: ${data.coders.length
          ? data.coders.map((c, i) => html`<span key=${c.username} class=${c.coded ? "" : "uncoded-coder"}>${i ? ", " : ""}<span class="coder">${c.username}</span> <small>(${c.state_words}${c.mode === "from_empty" ? ", from empty" : ""}${c.coded ? "" : ", not coded yet"})</small></span>`)
          : "none"}
        · <span id="coded-count" title=${`Only ${data.work_scope ? data.work_scope.label : "submitted work"} counts here, as in the agreement report`}>${data.summary.coded_revisions} coded revision${data.summary.coded_revisions === 1 ? "" : "s"}${data.summary.uncoded_revisions ? `, ${data.summary.uncoded_revisions} not coded yet` : ""}</span></p>
    </div>
    <div class="ws-head-actions">
      <span id="progress" class="muted">${done} / ${s.rows.length} rows adjudicated · ${left} open decision${left === 1 ? "" : "s"}</span>
      ${clip.editable
        ? html`<${ClipForm} action=${data.urls.accept_unanimous} id="accept-unanimous" disabled=${!unanimousLeft} ask=${askAcceptUnanimous}
            title="Rows on which every coder gave the same document become gold as they are" label=${`Accept ${unanimousLeft} unanimous row${unanimousLeft === 1 ? "" : "s"}`} />`
        : null}
      ${clip.editable && data.urls.accept_agreeing ? html`<${AgreeingControl} />` : null}
      ${data.can_mark
        ? html`<${ClipForm} action=${data.urls.mark_adjudicated} id="mark-adjudicated" className="primary" ask=${askMarkAdjudicated}
            title="Every row has validated gold and no disagreement is left open" label="Mark adjudicated" />`
        : null}
      <button type="button" id="open-help" title="Keyboard shortcuts (?)" onClick=${() => s.toggleHelp(true)}>?</button>
    </div>
  </header>`;
}

function Proposals() {
  return data.discard_proposals.map(
    (p) => html`<div class="banner warn proposal" key=${p.id}>
      <span><b>Discard proposal</b> by ${p.author}: <q>${p.body}</q></span>
      <${ClipForm} action=${data.urls.accept_discard} className="accept-discard" label="Discard the clip" hidden=${{ comment: String(p.id) }}
        ask=${() =>
          confirmStep({
            title: `Discard ${data.clip.sample_id}?`,
            lines: [`The clip leaves the benchmark with ${p.author}'s reason: “${p.body}”.`, `Its ${s.rows.length} rows stay in the database (and in the audit trail) but no longer count for agreement or any release.`],
            confirmLabel: "Discard the clip",
          })} />
      <${ClipForm} action=${data.urls.dismiss_discard} className="link" label="Keep it" hidden=${{ comment: String(p.id) }} />
    </div>`
  );
}

function Filters() {
  const update = (key, value) => {
    filters[key] = value;
    history.replaceState(null, "", `${location.pathname}${filterQuery()}${location.hash}`);
    const r = s.rows.length ? s.row() : null;
    if (r && !rowVisible(r)) {
      const first = s.rows.findIndex(rowVisible);
      if (first >= 0) s.open(first, { scroll: true });
    }
    s.changed();
  };
  const shownCount = s.rows.filter(rowVisible).length;
  return html`<form id="filters" class="filters" aria-label="Filter rows" onSubmit=${(e) => e.preventDefault()}>
    <label class="check"><input type="checkbox" id="f-disagreements" checked=${!!filters.disagreements} onChange=${(e) => update("disagreements", e.currentTarget.checked)} /> disagreements only</label>
    <label class="check"><input type="checkbox" id="f-open" checked=${!!filters.open} onChange=${(e) => update("open", e.currentTarget.checked)} /> not adjudicated</label>
    <select id="f-field" aria-label="field" value=${filters.field || ""} onChange=${(e) => update("field", e.currentTarget.value)}>
      <option value="">any field</option>
      ${FIELDS.map((f) => html`<option key=${f.name} value=${f.name}>${f.title}</option>`)}
    </select>
    <select id="f-label" aria-label="label" value=${filters.label || ""} onChange=${(e) => update("label", e.currentTarget.value)}>
      <option value="">any label</option>
      ${filters.label && filters.label.includes(":") ? html`<option value=${filters.label}>${filters.label.replace(":", ": ")}</option>` : null}
      ${data.label_choices.map((c) => html`<option key=${c.label} value=${c.label}>${c.label}${c.kinds.length > 1 ? ` (${c.kinds.join(", ")})` : ""}</option>`)}
    </select>
    <select id="f-annotator" aria-label="annotator" title="Rows where this coder is outvoted (or there is no majority)" value=${filters.annotator || ""} onChange=${(e) => update("annotator", e.currentTarget.value)}>
      <option value="">any coder</option>
      ${data.coders.map((c) => html`<option key=${c.username} value=${c.username}>${c.username} outvoted</option>`)}
    </select>
    <select id="f-order" aria-label="order" title="Most disputed first: by the row's disagreement score (label entropy and text distance across coders); d opens the most disputed open row"
      value=${filters.order || ""} onChange=${(e) => { filters.order = e.currentTarget.value; history.replaceState(null, "", `${location.pathname}${filterQuery()}${location.hash}`); applyOrder(filters.order); }}>
      <option value="">row order</option>
      <option value="disputed">most disputed first</option>
    </select>
    ${SIMILARITY.status === "computing" || SIMILARITY.status === "failed" || SIMILARITY.status === "unavailable"
      ? html`<span id="similarity-status" class="muted" title=${SIMILARITY.error || (SIMILARITY.job && SIMILARITY.job.error) || ""}>${SIMILARITY.status === "computing"
          ? html`text similarity: ${SIMILARITY.missing} text(s) being embedded on a worker; <a href="">reload</a>`
          : `text similarity ${SIMILARITY.status}: scores count labels only`}</span>`
      : null}
    <span id="filter-count" class="muted" aria-live="polite">${shownCount === s.rows.length ? `${shownCount} rows` : `${shownCount} of ${s.rows.length} rows`}</span>
  </form>`;
}

function ClipSide() {
  const clipComments = data.comments.filter((c) => c.row === null);
  return html`
    ${data.can_rereview && data.coders.length
      ? html`<details class="clip-comments" id="rereview">
          <summary>Request a re-review from a coder</summary>
          <form method="post" action=${data.urls.rereview} class="stack clip-action">
            <input type="hidden" name="csrfmiddlewaretoken" value=${csrf()} />
            <label for="rereview-annotator">Coder (their assignment reopens; the clip goes back to review)</label>
            <select name="annotator" id="rereview-annotator">${data.coders.map((c) => html`<option key=${c.username} value=${c.username}>${c.username} (${c.state_words})</option>`)}</select>
            <label for="rereview-message">What to look at again</label>
            <textarea name="message" id="rereview-message" rows="2"></textarea>
            <button type="submit">Reopen for re-review</button>
          </form>
        </details>`
      : null}
    <details class="clip-comments">
      <summary>Clip comments (${clipComments.length})</summary>
      <ul id="clip-comment-list" class="comment-list">
        ${clipComments.map((c) => html`<li key=${c.id}><span class="chip">${c.kind.replace("_", " ")}</span> <span>${c.body}</span><span class="muted"> — ${c.author}</span></li>`)}
      </ul>
    </details>`;
}

function ActionBar() {
  if (s.readOnly || !s.rows.length) return null;
  const r = s.row();
  const state = s.saving ? "saving…" : s.dirty ? "unsaved changes (kept in this browser)" : r.gold.version ? `saved · version ${r.gold.version}` : "no gold saved yet";
  const toAccept = FIELDS.filter((f) => !decisions(r)[f.name] && r.gold.suggestion.fields[f.name]).length;
  return html`<div class="editor-actions">
    <${SaveButtons} s=${s} />
    <button type="button" id="accept-next" class="primary" onClick=${() => acceptSuggestion(r, null, { next: true })}
      title="a: accept the suggestion of every field not decided yet, and open the next row">
      ${toAccept ? `Accept suggestion (${toAccept}), next` : "Next row"} <kbd>a</kbd>
    </button>
    <span id="save-state" class="muted">${state}</span>
  </div>`;
}

const KEYS = [
  [html`<kbd>a</kbd>`, "accept the suggestion of every field not decided yet and open the next row shown (also the button)"],
  [html`<kbd>j</kbd> / <kbd>k</kbd> (or <kbd>Alt</kbd>+<kbd>↓</kbd> / <kbd>↑</kbd>)`, "next / previous row shown"],
  [html`<kbd>d</kbd>`, "open the most disputed row still open (highest disagreement score)"],
  [html`<kbd>Ctrl</kbd>+<kbd>S</kbd>`, "save the gold row (every changed field becomes an edit decision)"],
  [html`<kbd>Ctrl</kbd>+<kbd>Enter</kbd>`, "save and go to the next row shown"],
  [html`<kbd>1</kbd>–<kbd>6</kbd>`, "jump to a dimension of the editor"],
  [html`<kbd>l</kbd>`, "open the label picker of the dimension you are in"],
  [html`<kbd>e</kbd>`, "pick evidence rows in the list"],
  [html`<kbd>g</kbd>`, "open the project's guide (labels, boundary rules, the project's guidance) in its own tab"],
  [html`<kbd>p</kbd> / <kbd>r</kbd>`, "play / pause; replay the row's span"],
  [html`<kbd>Esc</kbd>`, "leave a field / close this sheet"],
];
const INTRO = html`<p>The table compares every coder whose work counts (submitted work), field by field, with the LLM draft beside them for
  comparison; disputed fields are marked, and coders who have not submitted are greyed as <i>not coded yet</i>. Nothing is gold until you decide:
  <b>take</b> copies one coder's value into the gold (the note beside it travels with the decision), <b>accept</b> takes the suggestion
  (every coder's value, else a strict majority's; where the coders split there is none), and saving the gold editor below records an
  <i>edit</i> decision for every field you changed. The draft never decides: taking its value asks for your reason, and the release counts such values apart.</p>`;

function App() {
  useStore(s);
  const clip = data.clip;
  const fixed = clip.editable
    ? null
    : !READY.ready && ["in_review", "reviewed"].includes(clip.state)
      ? { kind: "info", text: `Not ready for adjudication: ${READY.reason.replace(/^.*?cannot be adjudicated yet: /, "")}` }
      : {
          kind: "info",
          text: `This clip is ${stateWords(clip.state)}: its gold can be read here but not changed.${clip.state === "adjudicated" ? " Request a re-review to reopen it." : ""}${clip.state === "discarded" && data.discard_reason ? ` Reason: ${data.discard_reason}` : ""}`,
        };
  const r = s.rows.length ? s.row() : null;
  const shownAny = s.rows.some(rowVisible);
  return html`<div class=${`ws adj${s.readOnly ? " read-only" : ""}`} id="workspace">
    <${Header} />
    <${Proposals} />
    <${Banner} s=${s} fixed=${fixed} />
    <div class="ws-body">
      <section class="ws-left" aria-label="Rows">
        <${Filters} />
        <${MediaPanel} s=${s} />
        <${RowList} s=${s} describe=${describeRow} emptyText="No row matches these filters." />
        <${ClipSide} />
      </section>
      <${EditorPane} s=${s} label="Coders side by side and the gold editor" bar=${html`<${ActionBar} />`}>
        ${r && shownAny
          ? html`<${RowEditor} key=${r.row_index} s=${s} decorate=${decorate} keepOpen=${undecided(r).flatMap((name) => FIELDS.find((f) => f.name === name).keys)}
              before=${html`<${CompareTable} r=${r} />`} />`
          : html`<p class="empty">${s.rows.length ? "No row matches these filters." : "This clip has no rows."}</p>`}
      <//>
    </div>
    <${HelpOverlay} s=${s} title="Adjudication" intro=${INTRO} keys=${KEYS} />
  </div>`;
}

bindKeyboard(s, { extra: { a: () => s.rows.length && acceptSuggestion(s.row(), null, { next: true }), d: () => s.rows.length && nextMostDisputed() } });
if (filters.order) applyOrder(filters.order);
mountPage(s, App, "adjudication-app");
