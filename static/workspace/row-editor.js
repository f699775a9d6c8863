/* The six-dimension row editor, shared by the annotator's workspace (editing a
 * revision) and the adjudication page (editing the gold). It draws what the
 * session holds (static/workspace/session.js) and sends every edit back to it.
 *
 * Dimensions with nothing recorded collapse to one line (open them with a
 * click or their number key), so a typical row fits in about a screen and a half. */
import { useLayoutEffect, useState } from "preact/hooks";
import { THERAPIST, clone, cls, fmtTime, html } from "./lib.js";
import { EntityChecks, EntitySelect, Field, Intensity, LabelPicker, ListField, TextField } from "./controls.js";
import { describePath } from "./words.js";

export const DIMENSIONS = [
  ["timing", "Timing & entities"],
  ["verbal", "Verbal content"],
  ["cues", "Individual cues"],
  ["stance", "Relational stance"],
  ["strategy", "Therapist strategy"],
  ["relation", "Relation pattern"],
];

const DIMENSION_OF = {
  target: "timing",
  utterance_type: "verbal",
  background_dialogue: "verbal",
  tone_of_voice: "cues",
  body_posture: "cues",
  facial_expressions: "cues",
  self_directed_behavior: "cues",
  internal_emotion: "cues",
  interaction_behavior: "stance",
  viewpoints_attitudes: "stance",
  support_strategy: "strategy",
};

const topKey = (path) => (path.match(/^[^.[]+/) || [""])[0];
const parentPath = (path) => {
  const up = path.replace(/(\.[^.[\]]+|\[\d+\])$/, "");
  return up === path ? "" : up;
};

/** The paths the editor shows a field or an entry for, given the document and the row. */
function shownPaths(w, row) {
  const [relKey, reasonKey, evidenceKey] = row.relation_keys;
  const therapist = row.primary_speaker === THERAPIST;
  const keys = ["target", "background_dialogue", "tone_of_voice", "body_posture", "facial_expressions", "self_directed_behavior", "internal_emotion", "interaction_behavior", "viewpoints_attitudes", relKey, reasonKey, evidenceKey];
  if (!therapist) keys.push("utterance_type");
  if (therapist) keys.push("support_strategy");
  const out = new Set(keys);
  for (const key of keys) {
    const value = w[key];
    if (!Array.isArray(value)) continue;
    value.forEach((entry, i) => {
      if (!entry || typeof entry !== "object") return;
      out.add(`${key}[${i}]`);
      for (const sub of Object.keys(entry)) out.add(`${key}[${i}].${sub}`);
    });
  }
  return out;
}

/** Issues placed at the nearest field the editor shows; the rest go to the general list. */
export function placeIssues(issues, w, row) {
  const shown = shownPaths(w, row);
  const at = new Map();
  const general = [];
  for (const issue of issues) {
    let host = issue.path;
    while (host && !shown.has(host)) host = parentPath(host);
    if (host) {
      if (!at.has(host)) at.set(host, []);
      at.get(host).push(host === issue.path ? issue.message : `${describePath(issue.path)}: ${issue.message}`);
    } else general.push(`${issue.path ? describePath(issue.path) + ": " : ""}${issue.message}`);
  }
  const dims = new Set([...at.keys()].map((p) => DIMENSION_OF[topKey(p)] || "relation"));
  return { at: (path) => at.get(path) || [], general, dims };
}

/**
 * Focus the control of the field an issue names (or its nearest shown parent). `withList`: after a refused save,
 * the list of problems stays in view above it (the field is brought into view only as far as it must be), so that
 * the banner's "listed above the row" is true on a short screen too.
 */
function focusIssue(issue, { withList = false } = {}) {
  if (!issue) return;
  let path = issue.path || "";
  for (;;) {
    const host = path ? document.querySelector(`#editor [data-path="${CSS.escape(path)}"]`) : null;
    if (host) {
      const control = host.matches("input, select, textarea, button") ? host : host.querySelector("input:not([disabled]), select:not([disabled]), textarea:not([disabled]), button:not([disabled])");
      const list = withList && document.getElementById("issue-list");
      (control || host).focus({ preventScroll: true });
      const pane = list && list.closest(".ws-right");
      if (pane) {
        // The list just below the sticky actions (their height varies: they wrap on a narrow screen), then the field
        // into view if it is below the pane's edge; if that pushed the list out, the list wins and the field is
        // focused below it.
        const bar = pane.querySelector(".editor-actions");
        const edge = () => (bar || pane).getBoundingClientRect()[bar ? "bottom" : "top"];
        const listUnderBar = () => (pane.scrollTop += list.getBoundingClientRect().top - edge() - 4);
        listUnderBar();
        host.scrollIntoView({ block: "nearest" });
        if (list.getBoundingClientRect().top < edge() - 1) listUnderBar();
      } else if (host.scrollIntoView) host.scrollIntoView({ block: "center" });
      return;
    }
    if (!path) return;
    const cut = Math.max(path.lastIndexOf("."), path.lastIndexOf("["));
    path = cut > 0 ? path.slice(0, cut) : "";
  }
}

function Dimension({ id, n, title, collapsed, summary, onOpen, children }) {
  if (collapsed) {
    return html`<section class="dim collapsed" id=${`dim-${id}`} tabindex="-1">
      <h3><button type="button" class="dim-open" onClick=${onOpen} title="Open this dimension (${n})">${n} · ${title}</button> <span class="muted">${summary}</span></h3>
    </section>`;
  }
  return html`<section class="dim" id=${`dim-${id}`} tabindex="-1"><h3>${n} · ${title}</h3>${children}</section>`;
}

/** The words of a row beside the current one (previous / next), a click away. */
function Neighbour({ row, where, onOpen }) {
  if (!row) return html`<div class=${`context ${where} none`}>${where === "prev" ? "(first row)" : "(last row)"}</div>`;
  return html`<button type="button" class=${`context ${where}`} onClick=${onOpen} title=${where === "prev" ? "previous row (k)" : "next row (j)"}>
    <span class="muted">#${row.row_index} ${row.primary_speaker}:</span> ${row.dialogue_cleaned || "(no words)"}
  </button>`;
}

/**
 * s: the session; decorate(keys) -> {className, badges} for page-specific marks
 * (changed from the draft, disputed, suggested); before: a vnode drawn above the dimensions.
 */
// The document keys each foldable dimension holds (a page may keep a dimension open for one of them: ``keepOpen``).
const DIMENSION_KEYS = {
  verbal: ["background_dialogue", "utterance_type"],
  cues: ["tone_of_voice", "body_posture", "facial_expressions", "self_directed_behavior", "internal_emotion"],
  stance: ["interaction_behavior", "viewpoints_attitudes"],
  strategy: ["support_strategy"],
};

/** `keepOpen`: document keys whose dimension never folds (on the adjudication page, the fields still open). */
export function RowEditor({ s, decorate, before, keepOpen = [] }) {
  const r = s.row();
  const w = s.working;
  const cfg = s.cfg;
  const ro = s.readOnly;
  const therapist = r.primary_speaker === THERAPIST;
  const [relKey, reasonKey, evidenceKey] = r.relation_keys;
  const shown = s.shownIssues();
  const placed = placeIssues(shown, w, r);
  // After a refused save the focus goes to the first field in error (the list above names them all).
  useLayoutEffect(() => {
    if (!s.focusFirstIssue) return;
    s.focusFirstIssue = false;
    focusIssue(shown[0], { withList: true });
  });
  const edit = (fn) => s.edit(fn);
  const deco = (keys) => (decorate ? decorate(keys) : {});
  const field = (label, path, control, { keys, hint, inline, quiet } = {}) => {
    const d = keys ? deco(keys) : {};
    return html`<${Field} key=${path} label=${label} path=${path} issues=${placed.at(path)} className=${d.className} badges=${d.badges} hint=${hint} inline=${inline} quiet=${quiet}>${control}<//>`;
  };
  // Inside a list entry the controls say what they are (placeholder, "— person —"): no label line above them.
  const sub = (label, path, control, opts = {}) => field(label, path, control, { quiet: true, ...opts });
  const text = (value, path, set, opts = {}) =>
    html`<${TextField} value=${value} path=${path} disabled=${ro} multiline=${opts.multiline} placeholder=${opts.placeholder} label=${opts.label}
      onInput=${(v) => edit((x) => set(x, v))} />`;
  const person = (value, path, set, exclude, label = "person") =>
    html`<${EntitySelect} value=${value} path=${path} entities=${cfg.entities} exclude=${exclude} disabled=${ro} label=${label} onChange=${(v) => edit((x) => set(x, v))} />`;
  const list = (key, title, blank, renderItem) =>
    field(
      title,
      key,
      html`<${ListField} fieldKey=${key} title=${title.toLowerCase()} items=${w[key] || []} blank=${blank} readOnly=${ro} onEdit=${edit} renderItem=${renderItem} />`,
      { keys: [key], inline: !(w[key] || []).length }
    );
  const personDescription = (key, title) =>
    list(key, title, () => ({ person: "", description: "" }), (item, i, path) =>
      html`<div class="entry-line">
        ${sub("person", `${path}.person`, person(item.person, `${path}.person`, (x, v) => (x[key][i].person = v)))}
        ${sub("description", `${path}.description`, text(item.description, `${path}.description`, (x, v) => (x[key][i].description = v), { label: `${title} description`, placeholder: "what they do with their body or face" }))}
      </div>`
    );

  const listsEmpty = (...keys) => keys.every((k) => !(w[k] || []).length);
  const empty = {
    verbal: therapist && listsEmpty("background_dialogue"),
    cues: !(w.tone_of_voice || "").trim() && listsEmpty("body_posture", "facial_expressions", "self_directed_behavior", "internal_emotion"),
    stance: listsEmpty("interaction_behavior", "viewpoints_attitudes"),
    strategy: !therapist || listsEmpty("support_strategy"),
    relation: (w[relKey] === null || w[relKey] === undefined) && !(w[reasonKey] || "").trim() && !(w[evidenceKey] || []).length,
  };
  const summaries = {
    verbal: "no utterance type on a therapist row; no background dialogue",
    cues: "nothing recorded",
    stance: "nothing recorded",
    strategy: therapist ? "no strategy (backchannel, hand-off or fact-finding question)" : "applies to therapist rows only",
    relation: "not annotated",
  };
  // A dimension folds only if it was already empty when the row opened: one the person empties while typing stays
  // open (folding it would remove the field under their cursor and send their next keys to the page).
  if (!s.openedWith || s.openedWith.row !== r) s.openedWith = { row: r, dims: new Set(Object.keys(empty).filter((id) => !empty[id])) };
  const held = (id) => keepOpen.some((k) => (id === "relation" ? [relKey, reasonKey, evidenceKey] : DIMENSION_KEYS[id] || []).includes(k));
  const collapsed = (id) => !!empty[id] && !s.expanded.has(id) && !placed.dims.has(id) && !s.openedWith.dims.has(id) && !held(id);
  const open = (id) => s.expandDimension(id);

  const sections = {
    timing: html`
      ${field("Target (whom the speaker addresses)", "target",
        html`<${EntityChecks} values=${w.target} path="target" entities=${cfg.entities} owner=${r.primary_speaker} disabled=${ro} onChange=${(v) => edit((x) => (x.target = v))} />`,
        { keys: ["target"] })}`,
    verbal: html`
      ${therapist
        ? html`<p class="muted">Utterance type does not apply to therapist rows.</p>`
        : field("Utterance type", "utterance_type",
            html`<${LabelPicker} fieldName="utterance_type" options=${cfg.utterance_types} rules=${cfg.rules} guidance=${cfg.guidance} value=${w.utterance_type} path="utterance_type" disabled=${ro}
              onChange=${(v) => edit((x) => (x.utterance_type = v))} />`,
            { keys: ["utterance_type"], hint: "The main function of the turn, not its emotion." })}
      ${list("background_dialogue", "Background dialogue", () => ({ speaker: "", target: [], content: "" }), (item, i, path) => html`<div class="entry-line">
        ${sub("speaker", `${path}.speaker`, person(item.speaker, `${path}.speaker`, (x, v) => (x.background_dialogue[i].speaker = v), null, "speaker"))}
        ${sub("toward", `${path}.target`, html`<${EntityChecks} values=${item.target} path=${`${path}.target`} entities=${cfg.entities} owner=${item.speaker} disabled=${ro}
          onChange=${(v) => edit((x) => (x.background_dialogue[i].target = v))} />`)}
        ${sub("words", `${path}.content`, text(item.content, `${path}.content`, (x, v) => (x.background_dialogue[i].content = v), { label: "background words", placeholder: "the words heard in the background" }))}
      </div>`)}`,
    cues: html`
      ${field("Tone of voice", "tone_of_voice", text(w.tone_of_voice, "tone_of_voice", (x, v) => (x.tone_of_voice = v), { label: "tone of voice" }), { keys: ["tone_of_voice"] })}
      ${personDescription("body_posture", "Body posture")}
      ${personDescription("facial_expressions", "Facial expression")}
      ${personDescription("self_directed_behavior", "Self-directed behaviour")}
      ${list("internal_emotion", "Internal emotion", () => ({ person: "", emotion_description: "", intensity: null }), (item, i, path) => html`<div class="entry-line">
        ${sub("person", `${path}.person`, person(item.person, `${path}.person`, (x, v) => (x.internal_emotion[i].person = v)))}
        ${sub("emotion", `${path}.emotion_description`, text(item.emotion_description, `${path}.emotion_description`, (x, v) => (x.internal_emotion[i].emotion_description = v), { label: "emotion", placeholder: "what they feel" }))}
        ${field(`intensity ${item.intensity ?? "—"}`, `${path}.intensity`, html`<${Intensity} value=${item.intensity} path=${`${path}.intensity`} disabled=${ro}
          onChange=${(v) => edit((x) => (x.internal_emotion[i].intensity = v))} />`, { inline: true })}
      </div>`)}`,
    stance: html`
      ${list("interaction_behavior", "Interaction behaviour", () => ({ initiator: "", target: [], description: "" }), (item, i, path) => html`<div class="entry-line">
        ${sub("initiator", `${path}.initiator`, person(item.initiator, `${path}.initiator`, (x, v) => (x.interaction_behavior[i].initiator = v), null, "initiator"))}
        ${sub("toward", `${path}.target`, html`<${EntityChecks} values=${item.target} path=${`${path}.target`} entities=${cfg.entities} owner=${item.initiator} disabled=${ro}
          onChange=${(v) => edit((x) => (x.interaction_behavior[i].target = v))} />`)}
        ${sub("what they do", `${path}.description`, text(item.description, `${path}.description`, (x, v) => (x.interaction_behavior[i].description = v), { label: "what they do", placeholder: "what they do toward the others" }))}
      </div>`)}
      ${list("viewpoints_attitudes", "Viewpoint", () => ({ source: "", target: "", viewpoint: "", attitude: "" }), (item, i, path) => html`<div class="entry-line">
        ${sub("source", `${path}.source`, person(item.source, `${path}.source`, (x, v) => (x.viewpoints_attitudes[i].source = v), null, "whose view"))}
        ${sub("about", `${path}.target`, person(item.target, `${path}.target`, (x, v) => (x.viewpoints_attitudes[i].target = v), [item.source], "about whom"))}
        ${sub("viewpoint", `${path}.viewpoint`, text(item.viewpoint, `${path}.viewpoint`, (x, v) => (x.viewpoints_attitudes[i].viewpoint = v), { label: "viewpoint", placeholder: "the view they hold" }))}
        ${sub("attitude", `${path}.attitude`, text(item.attitude, `${path}.attitude`, (x, v) => (x.viewpoints_attitudes[i].attitude = v), { label: "attitude", placeholder: "their attitude (e.g. critical)" }))}
      </div>`)}`,
    strategy: therapist
      ? html`${list("support_strategy", "Strategy", () => ({ provider: THERAPIST, target: [], strategy_type: "", strategy_content: "" }), (item, i, path) => html`<div class="entry-stack">
          ${field("strategy", `${path}.strategy_type`, html`<${LabelPicker} fieldName="support_strategy" options=${cfg.support_strategies} rules=${cfg.rules} guidance=${cfg.guidance} value=${item.strategy_type}
            path=${`${path}.strategy_type`} disabled=${ro} onChange=${(v) => edit((x) => (x.support_strategy[i].strategy_type = v))} />`)}
          ${field("for", `${path}.target`, html`<${EntityChecks} values=${item.target} path=${`${path}.target`} entities=${cfg.entities} owner=${THERAPIST} noTherapist=${true}
            groupAlone=${true} groupLabel=${cfg.group_label} disabled=${ro} onChange=${(v) => edit((x) => (x.support_strategy[i].target = v))} />`)}
          ${field("what the therapist does", `${path}.strategy_content`, text(item.strategy_content, `${path}.strategy_content`, (x, v) => (x.support_strategy[i].strategy_content = v), { multiline: true, label: "what the therapist does" }))}
        </div>`)}
        <p class="hint">Leave empty for backchannels, plain hand-offs and fact-finding questions.</p>`
      : html`<p class="muted">Support strategies apply to therapist rows only.</p>`,
    relation: html`
      ${field("Relation pattern", relKey, html`<${LabelPicker} fieldName="relation_pattern" options=${cfg.relation_patterns} rules=${cfg.rules} guidance=${cfg.guidance}
          value=${w[relKey] === undefined ? null : w[relKey]} path=${relKey} nullOption="— not annotated" blankOption="no clear pattern" disabled=${ro}
          onChange=${(v) => s.setRelationLabel(v)} />`, { keys: [relKey, reasonKey, evidenceKey] })}
      ${field("Reason (short, evidence-based)", reasonKey, text(w[reasonKey], reasonKey, (x, v) => (x[reasonKey] = v), { multiline: true, label: "reason for the pattern", placeholder: w[relKey] === null || w[relKey] === undefined ? "choose a pattern first" : "" }))}
      ${field("Evidence rows", evidenceKey, html`<${EvidenceRows} s=${s} evidenceKey=${evidenceKey} relKey=${relKey} />`, {
        hint: "Row numbers of this clip, separated by commas, or pick them in the row list.",
      })}`,
  };

  const warnings = [...(s.compareToDraft && r.draft ? r.draft.warnings : []).map((x) => ["LLM draft", x]), ...((s.doc(r) || {}).warnings || []).map((x) => [s.docTitle, x])];
  const prev = s.rows[s.pos - 1];
  const next = s.rows[s.pos + 1];
  return html`<div class="row-editor">
    ${shown.length
      ? html`<div class="issue-list" id="issue-list" role="alert">
          <b>${shown.length === 1 ? "1 problem to fix" : `${shown.length} problems to fix`} before this row can be saved:</b>
          <ul>${shown.map((i, n) => html`<li key=${n}><button type="button" class="link" onClick=${() => focusIssue(i)}>${i.path ? describePath(i.path) + ": " : ""}${i.message}</button></li>`)}</ul>
        </div>`
      : null}
    <div class="editor-head">
      <${Neighbour} row=${prev} where="prev" onOpen=${() => s.step(-1, { exact: true })} />
      <div class="head-line">
        <h2>Row ${r.row_index} <span class="muted">of ${s.rows.length} · ${fmtTime(r.start_time)}–${fmtTime(r.end_time)} (${(r.end_time - r.start_time).toFixed(1)} s) · speaker <b>${r.primary_speaker}</b></span></h2>
        <nav class="dim-nav" aria-label="dimensions">
          ${DIMENSIONS.map(([id, title], n) => html`<a key=${id} href=${`#dim-${id}`} title=${`${title} (${n + 1})`} onClick=${(e) => (e.preventDefault(), s.jumpTo(n + 1))}>${n + 1}</a>`)}
        </nav>
      </div>
      <blockquote class="dialogue">${r.dialogue_cleaned || "(no words: a nonverbal reaction row)"}</blockquote>
      <${Neighbour} row=${next} where="next" onOpen=${() => s.step(1, { exact: true })} />
      ${r.draft && r.draft.modality_note
        ? html`<p class="draft-modality" id="draft-modality" title="What the model could perceive of the clip when it drafted this row">LLM draft: <b>${r.draft.modality_note}</b></p>`
        : null}
      ${warnings.length
        ? html`<ul class="row-warnings">${warnings.map(([src, x], i) => html`<li key=${i}>⚠ ${src}: ${x.path ? describePath(x.path) + ": " : ""}${x.message}</li>`)}</ul>`
        : null}
    </div>
    ${before}
    ${DIMENSIONS.map(
      ([id, title], n) => html`<${Dimension} key=${id} id=${id} n=${n + 1} title=${title} collapsed=${collapsed(id)} summary=${summaries[id]} onOpen=${() => open(id)}>
        ${sections[id]}
      <//>`
    )}
    <${RowComments} s=${s} row=${r} />
  </div>`;
}

/** Evidence rows: typed (commas) or picked by clicking rows in the list. */
function EvidenceRows({ s, evidenceKey, relKey }) {
  const w = s.working;
  const rows = w[evidenceKey] || [];
  const noPattern = w[relKey] === null || w[relKey] === undefined;
  const [typed, setTyped] = useState(null); // the text while it is being typed
  const shown = typed !== null ? typed : rows.join(", ");
  return html`<div class="evidence">
    <input type="text" data-path=${evidenceKey} aria-label="evidence rows" value=${shown} disabled=${s.readOnly || (noPattern && !rows.length)}
      onInput=${(e) => {
        const text = e.currentTarget.value;
        setTyped(text);
        s.edit((x) => {
          x[evidenceKey] = text
            .split(/[\s,;]+/)
            .filter(Boolean)
            .map((v) => (/^\d+$/.test(v) ? parseInt(v, 10) : v));
        });
      }}
      onBlur=${() => setTyped(null)} />
    ${s.readOnly
      ? null
      : html`<button type="button" id="pick-evidence" class=${cls("pick", s.picking && "on")} aria-pressed=${s.picking} disabled=${noPattern && !s.picking}
          title=${noPattern ? "choose a pattern first" : "click rows in the list to add or remove them (e)"} onClick=${() => s.togglePicking()}>
          ${s.picking ? "Done picking" : "Pick in the list"}
        </button>`}
  </div>`;
}

function RowComments({ s, row }) {
  const mine = s.data.comments.filter((c) => c.row === row.row_index);
  const [open, setOpen] = useState(false);
  const [kind, setKind] = useState("comment");
  const [body, setBody] = useState("");
  const canWrite = !s.readOnly && s.canComment;
  if (!mine.length && !open) {
    return html`<section class="dim collapsed comments" id="row-comments">
      <h3>${canWrite ? html`<button type="button" class="dim-open" onClick=${() => setOpen(true)}>Comments and flags</button>` : "Comments and flags"} <span class="muted">none on this row</span></h3>
    </section>`;
  }
  const submit = async (e) => {
    e.preventDefault();
    if (await s.addComment({ row: row.row_index, kind, body })) setBody("");
  };
  return html`<section class="dim comments" id="row-comments">
    <h3>Comments and flags on this row</h3>
    <ul class="comment-list">
      ${mine.map((c) => html`<li key=${c.id}><span class="chip">${c.kind.replace("_", " ")}</span> <span>${c.body}</span><span class="muted"> — ${c.author}</span></li>`)}
    </ul>
    ${canWrite
      ? html`<form class="stack" onSubmit=${submit}>
          <select aria-label="comment kind" value=${kind} onChange=${(e) => setKind(e.currentTarget.value)}>
            <option value="comment">Comment</option><option value="flag_split">Flag: should be split</option><option value="flag_merge">Flag: should be merged</option>
          </select>
          <textarea rows="2" aria-label="comment text" placeholder="What should a lead know about this row?" value=${body} onInput=${(e) => setBody(e.currentTarget.value)} />
          <button type="submit">Add</button>
        </form>`
      : null}
  </section>`;
}

/** The "changed from the draft" mark and its revert link (the annotator's page). */
export function draftDecoration(s) {
  return (keys) => {
    const r = s.row();
    if (!s.compareToDraft || !r.draft || s.readOnly) return {};
    const d = r.draft.content;
    if (!keys.some((k) => JSON.stringify(s.working[k]) !== JSON.stringify(d[k]))) return {};
    return {
      className: "changed",
      badges: html`<span class="badge">changed from draft</span>
        <button type="button" class="link" onClick=${() => s.edit((x) => keys.forEach((k) => (x[k] = clone(d[k]))))}>revert to draft</button>`,
    };
  };
}
