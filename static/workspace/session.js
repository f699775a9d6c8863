/* The editing session behind both row-editor pages: which row is open, the
 * working copy of its document, saving, validation, local safekeeping, merges
 * and navigation. Components draw from it and call its methods; every
 * mutation ends with `changed()`, which re-renders them.
 *
 * Every edit is kept in localStorage until the server has it; saves carry the
 * document's version and a 409 answer opens a merge view instead of
 * overwriting anything. Writes to one row go out one after another (a queue
 * per row), so a save made while the previous one is in flight is based on
 * the version that one returns. Confirming a row and moving on does not wait
 * for the server: the next row is editable at once, and a refused write is
 * reported with a way back to its row.
 */
import { Store, api, clone, same } from "./lib.js";
import { DIMENSIONS } from "./row-editor.js";

export class EditorSession extends Store {
  /**
   * data: the page's embedded JSON. opts: {
   *   doc: "revision" | "gold", docTitle, readOnly, compareToDraft, canComment,
   *   urls: {save(r), validate(r)}, storageKey(r), baseContent(r) (what a row's editor starts from),
   *   rowVisible(r), saveBody(r, body), afterSave(r, json) }
   */
  constructor(data, opts) {
    super();
    this.data = data;
    this.rows = data.rows;
    this.cfg = data.config;
    this.opts = opts;
    this.docKey = opts.doc;
    this.docTitle = opts.docTitle || opts.doc;
    this.readOnly = !!opts.readOnly;
    this.compareToDraft = !!opts.compareToDraft;
    this.canComment = !!opts.canComment;
    this.pos = 0;
    this.working = {};
    this.dirty = false;
    this.saving = false;
    this.issues = [];
    this.banner = null; // {text, kind, actions: [{label, run}], sticky}
    this.merge = null; // {row, theirs, mine, choice: {key: "theirs"|"mine"}, detail}
    this.picking = false; // evidence rows picked by clicking rows in the list
    this.expanded = new Set(); // dimensions opened although empty
    this.helpOpen = false;
    this.scrollToRow = null;
    this.queues = new Map();
    this.validateSeq = 0;
    this.validateTimer = null;
    this.player = null; // set by the media panel
    for (const r of this.rows) r.unsaved = this.hasLocalEdits(r);
    // A click on a row in the list (one function for every row, so unchanged rows skip re-rendering).
    this.clickRow = (pos) => (this.picking ? this.toggleEvidence(this.rows[pos].row_index) : this.open(pos, { seek: "always" }));
  }

  // ------------------------------------------------------------ documents
  doc(r) {
    return r[this.docKey];
  }
  docContent(r) {
    const d = this.doc(r);
    return d ? d.content : null;
  }
  baseContent(r) {
    if (this.opts.baseContent) return this.opts.baseContent(r);
    return this.docContent(r) || (r.draft ? r.draft.content : {});
  }
  row() {
    return this.rows[this.pos];
  }
  visible(r) {
    return !this.opts.rowVisible || this.opts.rowVisible(r);
  }
  /** The status word of a row in the list. */
  status(r) {
    if (r.pending) return "saving";
    if (r.failed) return "failed";
    if (r.unsaved) return "unsaved";
    const d = this.doc(r);
    return d ? d.status : "draft";
  }

  // ------------------------------------------------------------ local safekeeping
  storageKey(r) {
    return this.opts.storageKey(r);
  }
  localCopy(r) {
    if (!this.doc(r)) return null;
    try {
      return JSON.parse(localStorage.getItem(this.storageKey(r)) || "null");
    } catch (e) {
      return null;
    }
  }
  hasLocalEdits(r) {
    const local = this.localCopy(r);
    return !!local && !same(local.content, this.docContent(r));
  }
  keepLocally() {
    const r = this.row();
    if (!this.doc(r)) return;
    if (!this.dirty) return this.dropLocal(r);
    try {
      localStorage.setItem(this.storageKey(r), JSON.stringify({ content: this.working, version: this.doc(r).version, at: new Date().toISOString() }));
    } catch (e) {
      /* storage full or disabled: a failed save still says the edits are only on the page */
    }
    r.unsaved = true;
  }
  dropLocal(r) {
    if (this.doc(r)) localStorage.removeItem(this.storageKey(r));
    r.unsaved = false;
  }

  // ------------------------------------------------------------ banner
  setBanner(text, kind = "info", actions = [], sticky = false, row = null) {
    this.banner = { text, kind, actions, sticky, row };
    this.changed();
  }
  clearBanner(force = false) {
    if (this.banner && this.banner.sticky && !force) return;
    this.banner = null;
    this.changed();
  }

  // ------------------------------------------------------------ navigation
  nextVisible(delta, from = this.pos) {
    for (let i = from + delta; i >= 0 && i < this.rows.length; i += delta) if (this.visible(this.rows[i])) return i;
    return null;
  }
  /** The next (1) or previous (-1) row shown; `exact`: the neighbouring row even when filtered out. */
  step(delta, { exact = false } = {}) {
    const i = exact ? this.pos + delta : this.nextVisible(delta);
    if (i !== null && i >= 0 && i < this.rows.length) this.open(i, { scroll: true, seek: "paused" });
  }
  openIndex(rowIndex, opts) {
    const i = this.rows.findIndex((r) => r.row_index === rowIndex);
    if (i >= 0) this.open(i, opts);
  }

  /** Open row i. scroll: bring it into view in the list; seek: move the playhead to it ("always", or "paused": only when the media is paused). */
  open(i, { scroll = false, seek = false } = {}) {
    if (i < 0 || i >= this.rows.length) return;
    this.pos = i;
    const r = this.row();
    this.picking = false;
    this.merge = null;
    this.openedWith = null; // which dimensions held something when the row opened (the editor fills it in)
    this.issues = r.failed ? r.failed.issues || [] : [];
    this.working = clone(this.baseContent(r)) || {};
    this.dirty = false;
    const local = this.localCopy(r);
    if (r.conflict) {
      this.working = local ? local.content : this.working;
      this.dirty = !same(this.working, this.docContent(r));
      this.openMerge(r, r.conflict, this.working);
    } else if (local && !same(local.content, this.docContent(r))) {
      this.working = local.content;
      this.dirty = true;
      if (this.doc(r) && local.version !== this.doc(r).version) {
        this.openMerge(r, { detail: "Unsaved edits from an earlier session were based on an older version of this row.", current: { ...this.doc(r) } }, local.content);
      } else {
        this.setBanner(`Restored unsaved edits from ${new Date(local.at).toLocaleString()}.`, "info", [{ label: "Discard them", run: () => this.discardLocal(r) }]);
      }
    } else {
      this.clearBanner();
    }
    history.replaceState(null, "", `${location.pathname}${location.search}#row-${r.row_index}`);
    if (scroll) this.scrollToRow = r.row_index;
    if (seek && this.player) this.player.follow(r, seek);
    // An untouched row is never shown in error: its problems appear once the person acts (saves, marks it
    // reviewed, or leaves a field they changed), all at once. Restored edits count as the person's.
    this.touched = this.dirty;
    this.showIssues = !!r.failed;
    this.showAll = !!r.failed; // after a refused save every problem is shown; before it, those of the fields left
    this.leftPaths = new Set();
    this.focusPath = null;
    this.editedInFocus = false;
    this.changed();
  }

  discardLocal(r) {
    this.dropLocal(r);
    this.clearBanner(true);
    if (r === this.row()) this.open(this.pos);
  }

  // ------------------------------------------------------------ editing
  edit(mutator) {
    if (this.readOnly) return;
    mutator(this.working);
    const r = this.row();
    this.dirty = !same(this.working, this.docContent(r));
    this.touched = true;
    this.editedInFocus = true;
    this.keepLocally();
    // Problems on display follow every edit (a fixed field loses its message at once); none appear while typing.
    if (this.showIssues) this.scheduleValidation();
    this.changed();
  }

  /** The focus entered the editor's field at `path` (the nearest data-path). */
  fieldEntered(path) {
    if (path !== this.focusPath) this.editedInFocus = false;
    this.focusPath = path;
  }
  /** The focus left the field at `path` for `to` (null: out of the editor): a field the person changed now
   * shows its problems, and from then on every problem on display follows each edit. Moving inside one field
   * (a list's "add" button to the new entry's person) is not leaving it. */
  fieldLeft(path, to) {
    if (this.readOnly || !path || !this.editedInFocus) return;
    if (to && (to === path || to.startsWith(path + "[") || to.startsWith(path + "."))) return;
    this.editedInFocus = false;
    this.leftPaths.add(path);
    this.showIssues = true;
    this.validateNow();
  }
  /** The problems the editor shows: all of them after a save or a mark was refused, else those of the fields left. */
  shownIssues() {
    if (!this.showIssues) return [];
    if (this.showAll) return this.issues;
    const under = (p) => [...this.leftPaths].some((l) => p === l || p.startsWith(l + "[") || p.startsWith(l + "."));
    return this.issues.filter((i) => under(i.path || ""));
  }

  /** Choosing "not annotated" also clears the reason and the evidence (nothing phantom is kept). */
  setRelationLabel(value) {
    const [relKey, reasonKey, evidenceKey] = this.row().relation_keys;
    this.edit((w) => {
      w[relKey] = relKey === "relation_cycle_state" && value === null ? "" : value;
      if (value === null) {
        w[reasonKey] = relKey === "relation_cycle_state" ? "" : null;
        w[evidenceKey] = [];
      }
    });
    if (value === null) this.picking = false;
  }

  expandDimension(id) {
    this.expanded.add(id);
    this.changed();
  }

  togglePicking(on = !this.picking) {
    const [relKey, , evidenceKey] = this.row().relation_keys;
    const noPattern = this.working[relKey] === null || this.working[relKey] === undefined;
    this.picking = on && !this.readOnly && !(noPattern && !(this.working[evidenceKey] || []).length);
    if (this.picking) this.expanded.add("relation");
    this.changed();
  }

  /** Add a row to the open row's evidence, or take it out (a click in the list while picking). */
  toggleEvidence(rowIndex) {
    const [, , evidenceKey] = this.row().relation_keys;
    this.edit((w) => {
      const rows = w[evidenceKey] || [];
      w[evidenceKey] = rows.includes(rowIndex) ? rows.filter((n) => n !== rowIndex) : [...rows, rowIndex].sort((a, b) => a - b);
    });
  }

  // ------------------------------------------------------------ validation
  scheduleValidation(delay = 350) {
    clearTimeout(this.validateTimer);
    if (this.readOnly || !this.opts.urls.validate) return;
    this.validateTimer = setTimeout(() => this.validateNow(), delay);
  }
  async validateNow() {
    const r = this.row();
    const seq = ++this.validateSeq;
    const res = await api("POST", this.opts.urls.validate(r), { content: this.working });
    if (seq !== this.validateSeq || r !== this.row() || res.status !== 200) return;
    this.issues = res.json.issues || [];
    // The "not saved" banner says where the row stands now, not where it stood at the last save.
    const b = this.banner;
    if (this.showAll && b && b.row === r.row_index && (b.kind === "error" || b.kind === "info")) {
      if (!this.issues.length) this.setBanner(`Row ${r.row_index} is not saved yet: nothing is left to fix, save it.`, "info", [], false, r.row_index);
      else this.setBanner(`Row ${r.row_index} is not saved yet: ${this.issues.length === 1 ? "1 field to fix" : `${this.issues.length} fields to fix`}, listed above the row.`, "error", [], false, r.row_index);
    }
    this.changed();
  }

  // ------------------------------------------------------------ writing
  /** Run `write` after every earlier write of the same row. */
  enqueue(r, write) {
    const before = this.queues.get(r) || Promise.resolve();
    const next = before.then(write, write);
    this.queues.set(r, next.catch(() => null));
    return next;
  }

  /** PUT `content` as the row's document, on the version it has when the request leaves. */
  async put(r, content, extra = {}) {
    const body = { content, version: this.doc(r).version, ...extra };
    if (this.opts.saveBody) this.opts.saveBody(r, body);
    const res = await api("PUT", this.opts.urls.save(r), body);
    if (res.status === 200) {
      r[this.docKey] = { ...this.doc(r), ...res.json };
      this.checkGuidance(res.json);
      if (this.opts.afterSave) this.opts.afterSave(r, res.json);
    }
    return res;
  }

  /** A revision save answers with the guidance version it recorded (the one in force): another
   * than the one this page shows means a lead changed the guidance since the page was opened. */
  checkGuidance(json) {
    const shown = this.cfg.guidance ? this.cfg.guidance.version : null;
    if (json && typeof json.guidance_version === "number" && json.guidance_version !== shown) this.guidanceChanged = json.guidance_version;
  }

  /** After a write of `sent` succeeded: the working copy follows the server unless it changed meanwhile. */
  settle(r, sent) {
    r.failed = null;
    r.conflict = null;
    const local = this.localCopy(r);
    if (!local || same(local.content, sent)) this.dropLocal(r);
    if (r === this.row()) {
      if (same(this.working, sent)) {
        // Keep the very objects being edited when the server stored what was sent: list entries are keyed by
        // object identity, so a fresh copy would rebuild every entry and drop the focus of the person typing.
        if (!same(this.working, this.docContent(r))) this.working = clone(this.docContent(r));
        this.dirty = false;
        this.dropLocal(r);
      } else {
        this.dirty = !same(this.working, this.docContent(r));
        this.keepLocally();
      }
    }
  }

  /** What to say and do when a write of row `r` was refused. */
  refused(r, res, sent, what) {
    const here = r === this.row();
    const back = here
      ? []
      : [
          {
            label: `Back to row ${r.row_index}`,
            run: () => {
              this.clearBanner(true);
              this.openIndex(r.row_index, { scroll: true, seek: "always" });
            },
          },
        ];
    if (res.status === 422) {
      r.failed = { issues: res.json.issues || [], message: res.json.detail };
      if (here) {
        this.issues = r.failed.issues;
        this.showIssues = true;
        this.showAll = true;
        this.focusFirstIssue = true;
      }
      // The server's detail says "not saved" again; the list above the row and the marked fields say what to fix.
      const count = r.failed.issues.length;
      this.setBanner(`Row ${r.row_index} was not ${what}: ${count === 1 ? "fix the field" : `fix the ${count || ""} fields`} listed above the row and marked in red.`.replace("  ", " "), "error", back, !here, here ? r.row_index : null);
    } else if (res.status === 409 && res.json.current) {
      const hadEdits = !same(sent, this.docContent(r));
      if (!hadEdits) {
        // Nothing of the annotator's would be lost: show the saved version and let them decide again.
        this.adopt(r, res.json.current, Object.keys(res.json.current.content || {}));
        this.setBanner(`Row ${r.row_index} was changed in another tab or window; its saved version is shown now. Check it, then confirm it again.`, "warn", back, !here);
      } else if (here) {
        this.openMerge(r, res.json, this.working);
      } else {
        r.conflict = res.json;
        this.setBanner(`Row ${r.row_index} was changed elsewhere and was not ${what}: open it to merge, nothing is lost.`, "warn", back, true);
      }
    } else {
      // Any other refusal (a 409 without a current version is the clip's state: discarded, released) keeps the edits here.
      r.failed = { issues: [], message: res.json.detail };
      this.setBanner(`Row ${r.row_index} was not ${what}: ${res.json.detail || res.status}. The edits are kept in this browser.`, "error", back, !here);
    }
  }

  /** Save the open row (Ctrl+S, the Save button); `next`: then open the next row shown. */
  async save({ next = false, reviewed } = {}) {
    if (this.readOnly) return false;
    const r = this.row();
    const sent = clone(this.working);
    this.saving = true;
    this.changed();
    const extra = reviewed === undefined ? {} : { reviewed };
    const res = await this.enqueue(r, () => this.put(r, sent, extra));
    this.saving = false;
    if (res.status === 200) {
      this.settle(r, sent);
      if (r === this.row()) {
        this.issues = [];
        this.clearBanner();
        const i = next ? this.nextVisible(1) : null;
        if (i !== null) return this.open(i, { scroll: true, seek: "paused" }), true;
      }
      this.changed();
      return true;
    }
    this.refused(r, res, sent, "saved");
    return false;
  }

  /** Mark the open row reviewed (saving local edits with it), or reopen a reviewed row. */
  async markReviewed() {
    if (this.readOnly || this.docKey !== "revision") return;
    const r = this.row();
    if (this.dirty) return this.save({ reviewed: true });
    const reviewed = r.revision.status !== "reviewed";
    const sent = clone(this.working);
    const res = await this.enqueue(r, () => this.postReview(r, reviewed));
    if (res.status === 200) {
      this.settle(r, sent);
      if (r === this.row()) this.issues = [];
      this.clearBanner();
      this.changed();
    } else this.refused(r, res, sent, reviewed ? "marked reviewed" : "reopened");
  }

  async postReview(r, reviewed) {
    const res = await api("POST", `/api/v1/revisions/${r.revision.id}/review/`, { version: r.revision.version, reviewed });
    if (res.status === 200) {
      r.revision = { ...r.revision, ...res.json };
      this.checkGuidance(res.json);
    }
    return res;
  }

  /** The review pass: confirm the open row as it is (with its edits) and open the next one at once. */
  confirmAndNext() {
    if (this.readOnly || this.docKey !== "revision") return null;
    const r = this.row();
    const i = this.nextVisible(1);
    const sent = clone(this.working);
    let done = null;
    if (!(r.revision.status === "reviewed" && !this.dirty)) {
      const dirty = this.dirty;
      r.pending = (r.pending || 0) + 1;
      done = this.enqueue(r, () => (dirty ? this.put(r, sent, { reviewed: true }) : this.postReview(r, true))).then((res) => {
        r.pending -= 1;
        if (res.status === 200) {
          this.settle(r, sent);
          this.changed();
        } else this.refused(r, res, sent, "marked reviewed");
        return res;
      });
    }
    if (i !== null) this.open(i, { scroll: true, seek: "paused" });
    else {
      this.setBanner("That was the last row. When every row is reviewed, submit the clip.", "info");
      this.changed();
    }
    return done;
  }

  // ------------------------------------------------------------ merging
  /** A stale write: what changed on the server beside the local edit, field by field. */
  openMerge(r, payload, mine) {
    const theirs = payload.current;
    const keys = [...new Set([...Object.keys(theirs.content || {}), ...Object.keys(mine)])].filter((k) => !same((theirs.content || {})[k], mine[k]));
    const base = this.docContent(r) || {};
    // Three-way default: my value where I changed the field, theirs where only they did.
    const choice = {};
    keys.forEach((k) => (choice[k] = same(mine[k], base[k]) ? "theirs" : "mine"));
    r.conflict = payload;
    this.merge = { row: r, theirs, mine: clone(mine), keys, choice, detail: payload.detail || "" };
    this.setBanner("Your save was refused because the row changed since you opened it. Choose field by field below; nothing has been lost.", "warn");
  }
  chooseInMerge(key, side) {
    this.merge.choice[key] = side;
    this.changed();
  }
  async applyMerge() {
    const { row: r, theirs, mine, keys, choice } = this.merge;
    const merged = clone(theirs.content);
    keys.forEach((k) => {
      if (choice[k] === "mine") merged[k] = clone(mine[k]);
    });
    r[this.docKey] = { ...this.doc(r), version: theirs.version, content: theirs.content, status: theirs.status };
    r.conflict = null;
    this.merge = null;
    this.working = merged;
    this.dirty = !same(merged, theirs.content);
    this.keepLocally();
    this.clearBanner(true);
    return this.save({});
  }
  takeTheirs() {
    const { row: r, theirs } = this.merge;
    r[this.docKey] = { ...this.doc(r), ...theirs };
    r.conflict = null;
    this.dropLocal(r);
    this.merge = null;
    this.working = clone(theirs.content);
    this.dirty = false;
    this.clearBanner(true);
    this.changed();
  }

  /** Take the server's copy of a row's document after a write made elsewhere on the page:
   * `keys` take the server's value; any other key the editor changed keeps the unsaved edit. */
  adopt(r, serverDoc, keys) {
    const before = this.baseContent(r);
    r[this.docKey] = { ...this.doc(r), ...serverDoc };
    if (r === this.row()) {
      const next = clone(this.baseContent(r));
      if (this.dirty) {
        for (const k of Object.keys(this.working)) {
          if (!keys.includes(k) && !same(this.working[k], (before || {})[k])) next[k] = clone(this.working[k]);
        }
      }
      this.working = next;
      this.dirty = !same(this.working, this.docContent(r));
      this.keepLocally();
      if (this.dirty && this.showIssues) this.scheduleValidation();
      else if (!this.dirty) this.issues = [];
    } else r.unsaved = this.hasLocalEdits(r);
    this.changed();
  }

  // ------------------------------------------------------------ comments
  async addComment({ row = null, kind = "comment", body }) {
    const res = await api("POST", `/api/v1/clips/${this.data.clip.id}/comments/`, { row, kind, body });
    if (res.status === 201) {
      this.data.comments.push(res.json);
      if (row !== null) this.rows.filter((r) => r.row_index === row).forEach((r) => (r.commented = true));
      this.setBanner(kind === "discard_proposal" ? "Discard proposal sent to the leads." : "Comment added.", "info");
      return true;
    }
    this.setBanner(res.json.detail || JSON.stringify(res.json), "error");
    return false;
  }

  // ------------------------------------------------------------ keyboard
  /** Jump to dimension n (1–6): open it if it is collapsed, then focus its first field. */
  jumpTo(n) {
    const id = DIMENSIONS[n - 1] && DIMENSIONS[n - 1][0];
    if (!id) return;
    this.expandDimension(id);
    // Preact renders in a microtask queued by expandDimension; this one runs right after it, before the next key
    // press is handled, so a key typed straight after the jump lands in the field (a frame later it went to the page).
    queueMicrotask(() => {
      const section = document.getElementById(`dim-${id}`);
      if (!section) return;
      // Keys typed before this frame (a busy machine) may already have opened a picker in the
      // section: its filter keeps the focus, or the next keys would land on the button as shortcuts.
      if (section.contains(document.activeElement)) return;
      section.scrollIntoView({ block: "start" });
      const first = section.querySelector("input:not([disabled]), select:not([disabled]), textarea:not([disabled]), button.picker-button:not([disabled])");
      (first || section).focus();
    });
  }
  openPicker() {
    const active = document.activeElement;
    const section = active && active.closest ? active.closest(".dim") : null;
    const picker = (section && section.querySelector("button.picker-button:not([disabled])")) || document.querySelector("#dim-relation button.picker-button:not([disabled])");
    if (picker) picker.click();
    else {
      this.expandDimension("relation");
      queueMicrotask(() => document.querySelector("#dim-relation button.picker-button:not([disabled])")?.click());
    }
  }
  /** The project's guide in its own tab (one for the browser: a second press brings it back),
   * opened at the label of the picker that has the focus, if one does. */
  openGuide() {
    if (!this.cfg.guide_url) return;
    const active = document.activeElement;
    const picker = active && active.closest ? active.closest(".picker") : null;
    const button = picker && picker.querySelector("button.picker-button");
    const label = button ? button.dataset.value : undefined;
    const anchor = button && label !== undefined && label !== "null" ? `#${this.cfg.scenario}-${button.dataset.picker}-${label || "empty"}` : "";
    const tab = window.open(this.cfg.guide_url + anchor, "rescue-guide");
    if (tab) tab.focus();
  }
  toggleHelp(show = !this.helpOpen) {
    this.helpOpen = show;
    this.changed();
  }
}
