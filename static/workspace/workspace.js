/* The annotator's clip page: media, the row list with the conversation's words,
 * the transcript beside it, and the row editor. Data arrives embedded as JSON
 * (#workspace-data); edits go to the workspace API (see session.js). */
import { useState } from "preact/hooks";
import { api, html, readData, useStore } from "./lib.js";
import { confirmStep } from "./dialog.js";
import { MediaPanel, Player } from "./media.js";
import { Banner, EditorPane, HelpOverlay, SaveButtons, Transcript, bindKeyboard, mountPage } from "./panels.js";
import { RowEditor, draftDecoration } from "./row-editor.js";
import { RowList } from "./row-list.js";
import { EditorSession } from "./session.js";
import { setStateWords, stateWords } from "./words.js";

const data = readData();
setStateWords(data.config.state_words);
const readOnlyInfo = { current: data.read_only };

const s = new EditorSession(data, {
  doc: "revision",
  docTitle: "your revision",
  readOnly: !!data.read_only,
  compareToDraft: true,
  canComment: !!data.assignment,
  urls: {
    save: (r) => `/api/v1/revisions/${r.revision.id}/`,
    validate: (r) => `/api/v1/revisions/${r.revision.id}/validate/`,
  },
  storageKey: (r) => `rescue:rev:${r.revision.id}`,
});
new Player(s, data.settings);
const decorate = draftDecoration(s);

const reviewedCount = () => s.rows.filter((r) => r.revision && r.revision.status === "reviewed").length;

function describeRow(r) {
  return { warnings: (r.draft ? r.draft.warnings.length : 0) + (r.revision ? r.revision.warnings.length : 0) };
}

async function submitClip() {
  const total = s.rows.length;
  const open = s.rows.filter((r) => !r.revision || r.revision.status !== "reviewed");
  const unsaved = s.rows.filter((r) => r.unsaved || r.pending);
  if (unsaved.length) {
    s.setBanner(`Rows ${unsaved.map((r) => r.row_index).join(", ")} have edits the server does not have yet: save them first.`, "error");
    return;
  }
  if (open.length) {
    const first = open[0];
    s.setBanner(`${open.length} of ${total} rows are not reviewed yet (rows ${open.slice(0, 15).map((r) => r.row_index).join(", ")}${open.length > 15 ? "…" : ""}): review them, then submit.`, "error", [
      { label: `Go to row ${first.row_index}`, run: () => s.openIndex(first.row_index, { scroll: true, seek: "always" }) },
    ]);
    return;
  }
  const ok = await confirmStep({
    title: `Submit ${data.clip.sample_id}?`,
    lines: [
      `All ${total} rows are reviewed; your annotations go to the leads for agreement and adjudication.`,
      "After submitting, the clip is read-only for you. Only a lead can reopen it (a re-review request).",
    ],
    confirmLabel: "Submit the clip",
  });
  if (!ok) return;
  const res = await api("POST", `/api/v1/assignments/${data.assignment.id}/submit/`);
  if (res.status === 200) {
    data.assignment.state = res.json.state;
    data.clip.state = res.json.clip_state; // the clip's state as the lead's pages show it now
    readOnlyInfo.current = { reason: "submitted", message: "You submitted this clip, so it is read-only. A lead can reopen it for you (a re-review request); ask one if something needs changing." };
    s.readOnly = true;
    s.setBanner("Clip submitted. Thank you!", "success");
  } else s.setBanner(res.json.detail || "Could not submit the clip.", "error");
}

function Header() {
  const clip = data.clip;
  const a = data.assignment;
  return html`<header class="ws-head">
    <div>
      <h1>${clip.sample_id}</h1>
      <p class="muted">${clip.scenario === "family" ? "Family" : "Couple"} · ${clip.participants.join(", ")} · <span class=${`state state-${clip.state}`}>${stateWords(clip.state)}</span>
        ${a ? ` · ${stateWords(a.mode)}` : ""}</p>
    </div>
    <div class="ws-head-actions">
      <span id="progress" class="muted">${reviewedCount()} / ${s.rows.length} rows reviewed</span>
      ${a && !s.readOnly ? html`<button type="button" id="submit-clip" class="primary" onClick=${submitClip}>Submit clip</button>` : null}
      <a id="open-guide" class="button" href=${data.config.guide_url} target="rescue-guide" title="The project's guide: every label, the boundary rules and the project's guidance (g)">Guide</a>
      <button type="button" id="open-help" title="Keyboard shortcuts (?)" onClick=${() => s.toggleHelp(true)}>?</button>
    </div>
  </header>`;
}

function ActionBar() {
  if (s.readOnly || !s.rows.length) return null;
  const r = s.row();
  const d = r.revision;
  const state = s.saving ? "saving…" : s.dirty ? "unsaved changes (kept in this browser)" : `saved · version ${d.version}`;
  return html`<div class="editor-actions">
    <${SaveButtons} s=${s} />
    <button type="button" id="mark-reviewed" onClick=${() => s.markReviewed()} title="m">${d.status === "reviewed" ? "Reviewed ✓ (reopen)" : "Mark reviewed"}</button>
    <button type="button" id="review-next" class="primary" onClick=${() => s.confirmAndNext()} title="Enter: the row is right as it is (with your edits); mark it reviewed and open the next">
      ✓ Reviewed, next <kbd>Enter</kbd>
    </button>
    <span id="save-state" class="muted">${state}</span>
  </div>`;
}

function ClipComments() {
  const [kind, setKind] = useState("comment");
  const [body, setBody] = useState("");
  const clipComments = data.comments.filter((c) => c.row === null);
  const submit = async (e) => {
    e.preventDefault();
    if (await s.addComment({ row: null, kind, body })) setBody("");
  };
  return html`<details class="clip-comments" id="clip-comments">
    <summary>Clip comments and discard proposal (${clipComments.length})</summary>
    <ul id="clip-comment-list" class="comment-list">
      ${clipComments.map((c) => html`<li key=${c.id}><span class="chip">${c.kind.replace("_", " ")}</span> <span>${c.body}</span><span class="muted"> — ${c.author}</span></li>`)}
    </ul>
    ${s.canComment && !s.readOnly
      ? html`<form id="clip-comment-form" class="stack" onSubmit=${submit}>
          <label for="clip-comment-kind">Kind</label>
          <select id="clip-comment-kind" value=${kind} onChange=${(e) => setKind(e.currentTarget.value)}>
            <option value="comment">Comment on the clip</option><option value="discard_proposal">Propose discarding this clip</option>
          </select>
          <label for="clip-comment-body">Text (for a discard proposal: the reason, e.g. subtitle errors, speaker mismatch, insufficient context)</label>
          <textarea id="clip-comment-body" rows="2" value=${body} onInput=${(e) => setBody(e.currentTarget.value)} />
          <button type="submit">Add</button>
        </form>`
      : null}
  </details>`;
}

const KEYS = [
  [html`<kbd>Enter</kbd>`, "the row is right: mark it reviewed and open the next row (also the ✓ Reviewed, next button)"],
  [html`<kbd>j</kbd> / <kbd>k</kbd> (or <kbd>Alt</kbd>+<kbd>↓</kbd> / <kbd>↑</kbd>)`, "next / previous row"],
  [html`<kbd>Ctrl</kbd>+<kbd>S</kbd>`, "save the row"],
  [html`<kbd>Ctrl</kbd>+<kbd>Enter</kbd>`, "save and go to the next row"],
  [html`<kbd>m</kbd> (or <kbd>Alt</kbd>+<kbd>M</kbd>)`, "mark the row reviewed, or reopen it (saves first)"],
  [html`<kbd>p</kbd>`, "play / pause the media"],
  [html`<kbd>r</kbd>`, "replay the row (with your pre-roll and speed; it stops at the row's end)"],
  [html`<kbd>1</kbd>–<kbd>6</kbd> (or <kbd>Alt</kbd>+<kbd>1</kbd>–<kbd>6</kbd>)`, "jump to a dimension (opens it when it is folded)"],
  [html`<kbd>l</kbd>`, "open the label picker of the dimension you are in; type to filter, ↑/↓, Enter to choose; the focus then moves to the next field"],
  [html`<kbd>e</kbd>`, "pick evidence rows by clicking rows in the list (again, or Esc, to stop)"],
  [html`<kbd>g</kbd>`, "open the project's guide in its own tab (at the label being chosen, from a label picker): definitions, boundary rules and the project's guidance, searchable"],
  [html`<kbd>Esc</kbd>`, "leave a field / close this sheet"],
  [html`<kbd>?</kbd>`, "show this sheet"],
];

function App() {
  useStore(s);
  const info = readOnlyInfo.current;
  const fixed = info ? { kind: info.reason === "submitted" ? "info" : "warn", text: info.since ? `${info.message} (Submitted ${new Date(info.since).toLocaleString()}.)` : info.message } : null;
  return html`<div class=${`ws${s.readOnly ? " read-only" : ""}`} id="workspace">
    <${Header} />
    <${Banner} s=${s} fixed=${fixed} />
    ${s.guidanceChanged
      ? html`<p class="banner info" id="guidance-changed" role="status"><span>A lead changed the project's guidance since this page was opened (now version ${s.guidanceChanged});
          your saves record that version. <a href="">Reload the page</a> to see it beside the labels (edits not saved yet are kept in this browser).</span></p>`
      : null}
    <div class=${`ws-body${data.cues.length ? " with-cues" : ""}`}>
      <section class="ws-left" aria-label="Clip">
        <${MediaPanel} s=${s} />
        <${RowList} s=${s} describe=${describeRow} />
        <${ClipComments} />
      </section>
      <${Transcript} s=${s} />
      <${EditorPane} s=${s} label="Row editor" bar=${html`<${ActionBar} />`}>
        ${s.rows.length ? html`<${RowEditor} key=${s.row().row_index} s=${s} decorate=${decorate} />` : html`<p class="empty">This clip has no rows yet.</p>`}
      <//>
    </div>
    <${HelpOverlay} s=${s} title="Keyboard shortcuts" keys=${KEYS} />
  </div>`;
}

bindKeyboard(s, { onEnter: () => s.confirmAndNext() });
mountPage(s, App, "workspace-app");
