/* The annotator's clip view: row list, media sync and the six-dimension row editor.
 *
 * Data arrives embedded as JSON (#workspace-data). Every edit is kept in
 * localStorage until the server has it; saves carry the revision version and a
 * 409 answer opens a merge view instead of overwriting anything. All text from
 * transcripts and the LLM is inserted with textContent, never as HTML.
 *
 * The same editor edits a row's gold on the lead's adjudication page. The
 * embedded data then says which member of a row is edited ("document":
 * "revision" here, "gold" there), where it is saved and validated
 * ("endpoints", with {row} standing for the row id) and under which prefix
 * unsaved edits are kept ("storage_prefix"). A page script may extend the
 * editor through window.RowEditorHooks (every hook is optional; see
 * static/adjudication/adjudicate.js). Without them the editor behaves exactly
 * as the annotator's workspace needs.
 */
(function () {
  "use strict";

  const data = JSON.parse(document.getElementById("workspace-data").textContent);
  const root = document.getElementById("workspace");
  const readOnly = root.dataset.readOnly === "true";
  const cfg = data.config;
  const rows = data.rows;
  const THERAPIST = "Therapist";
  const STORAGE_PREFIX = "rescue:rev:";
  const DOC = data.document || "revision"; // the row member being edited
  const DOC_TITLE = data.document_title || "stored";
  const compareToDraft = data.compare_to_draft !== false;
  const hooks = window.RowEditorHooks || {};

  let pos = 0; // position of the open row in `rows`
  let working = null; // the open row's content being edited
  let dirty = false;
  let issues = [];
  let validateTimer = null;
  let media = null;
  let stopAt = null;

  // ---------------------------------------------------------------- helpers
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") node.className = v;
      else if (k === "text") node.textContent = v;
      else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
      else if (k === "dataset") Object.assign(node.dataset, v);
      else node.setAttribute(k, v === true ? "" : v);
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }
  const clone = (x) => JSON.parse(JSON.stringify(x));
  const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
  function fmtTime(t) {
    const m = Math.floor(t / 60);
    const s = (t - m * 60).toFixed(1).padStart(4, "0");
    return `${m}:${s}`;
  }
  function csrf() {
    const m = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
    return m ? decodeURIComponent(m[1]) : "";
  }
  async function api(method, url, body) {
    const response = await fetch(url, {
      method,
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrf(), Accept: "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    let json = null;
    try {
      json = await response.json();
    } catch (e) {
      json = { detail: `the server answered ${response.status}` };
    }
    return { status: response.status, json };
  }
  const revisionUrl = (id, action) => `/api/v1/revisions/${id}/${action ? action + "/" : ""}`;
  // Where a row's document is saved (no action) or checked ("validate").
  function docUrl(r, action) {
    if (data.endpoints) return data.endpoints[action || "save"].replace("{row}", r.row_id);
    return revisionUrl(r.revision.id, action);
  }

  function banner(text, kind, actions) {
    const box = document.getElementById("banner");
    box.replaceChildren(el("span", { text }), ...(actions || []));
    box.className = `banner ${kind || "info"}`;
    box.hidden = false;
  }
  function clearBanner() {
    document.getElementById("banner").hidden = true;
  }

  // ------------------------------------------------------ local safekeeping
  const row = () => rows[pos];
  const rev = () => row()[DOC];
  const storageKey = (r) => (data.storage_prefix ? data.storage_prefix + r.row_id : STORAGE_PREFIX + r.revision.id);
  function keepLocally() {
    if (!rev()) return;
    try {
      localStorage.setItem(storageKey(row()), JSON.stringify({ content: working, version: rev().version, at: new Date().toISOString() }));
    } catch (e) {
      /* storage full or disabled: the banner below warns on save failure */
    }
  }
  function localCopy(r) {
    if (!r[DOC]) return null;
    try {
      return JSON.parse(localStorage.getItem(storageKey(r)) || "null");
    } catch (e) {
      return null;
    }
  }
  function dropLocal(r) {
    if (r[DOC]) localStorage.removeItem(storageKey(r));
  }

  // ------------------------------------------------------------- row list
  function statusOf(r) {
    if (localCopy(r) && !same(localCopy(r).content, r[DOC].content)) return "unsaved";
    return r[DOC] ? r[DOC].status : "draft";
  }
  const visible = (r) => !hooks.rowVisible || hooks.rowVisible(r);
  function renderRowList() {
    const body = document.querySelector("#row-list tbody");
    const shown = rows.filter(visible);
    body.replaceChildren(
      ...(shown.length || !hooks.rowVisible ? [] : [el("tr", { class: "no-rows" }, el("td", { colspan: "6", class: "empty", text: "No row matches these filters." }))]),
      ...shown.map((r) => {
        const i = rows.indexOf(r);
        const content = r[DOC] ? r[DOC].content : r.draft ? r.draft.content : {};
        const warnings = (compareToDraft && r.draft ? r.draft.warnings.length : 0) + (r[DOC] ? r[DOC].warnings.length : 0);
        const status = statusOf(r);
        return el(
          "tr",
          { id: `row-${r.row_index}`, class: i === pos ? "current" : "", tabindex: "-1", onclick: () => openRow(i, true) },
          el("td", { text: r.row_index }),
          el("td", { text: `${fmtTime(r.start_time)}–${fmtTime(r.end_time)}` }),
          el("td", { text: `${(r.end_time - r.start_time).toFixed(1)} s` }),
          el("td", {}, el("b", { text: r.primary_speaker }), " → ", (content.target || []).join(", ")),
          el("td", {}, el("span", { class: `chip chip-${status}`, text: hooks.statusText ? hooks.statusText(r, status) : status })),
          el(
            "td",
            { class: "markers" },
            hooks.rowMarkers ? hooks.rowMarkers(r) : null,
            warnings ? el("span", { class: "marker warn", title: `${warnings} warning(s)`, text: "⚠" }) : null,
            r.commented ? el("span", { class: "marker note", title: "has comments", text: "✎" }) : null
          )
        );
      })
    );
    if (hooks.progressText) document.getElementById("progress").textContent = hooks.progressText(rows);
    else {
      const reviewed = rows.filter((r) => r.revision && r.revision.status === "reviewed").length;
      document.getElementById("progress").textContent = `${reviewed} / ${rows.length} rows reviewed`;
    }
  }

  // ------------------------------------------------------------ the editor
  const SECTIONS = [
    ["timing", "1 · Timing & entities"],
    ["verbal", "2 · Verbal content"],
    ["cues", "3 · Individual cues"],
    ["stance", "4 · Relational stance"],
    ["strategy", "5 · Therapist strategy"],
    ["relation", "6 · Relation pattern"],
  ];

  function draftContent() {
    return row().draft ? row().draft.content : null;
  }
  function changed(keys) {
    const d = draftContent();
    return d !== null && keys.some((k) => !same(working[k], d[k]));
  }
  function update(mutator) {
    if (readOnly) return;
    mutator(working);
    dirty = !same(working, rev().content);
    keepLocally();
    renderEditor();
    renderRowList();
    scheduleValidation();
  }

  function field(label, path, control, keys, hint) {
    const diffKeys = keys || [];
    const box = el("div", { class: "field", dataset: { path } }, el("label", { class: "field-label", text: label }), control);
    if (hint) box.append(el("p", { class: "hint", text: hint }));
    if (diffKeys.length && hooks.fieldClass) {
      const extra = hooks.fieldClass(row(), diffKeys);
      if (extra) box.classList.add(...extra.split(" "));
    }
    if (compareToDraft && diffKeys.length && changed(diffKeys) && !readOnly) {
      box.classList.add("changed");
      box.querySelector(".field-label").append(
        el("span", { class: "badge", text: "changed from draft" }),
        el("button", { type: "button", class: "link", onclick: () => update((w) => diffKeys.forEach((k) => (w[k] = clone(draftContent()[k])))), text: "revert to draft" })
      );
    }
    return box;
  }

  function entitySelect(value, path, onChange, exclude) {
    const select = el("select", { dataset: { path }, disabled: readOnly, onchange: (e) => onChange(e.target.value) });
    select.append(el("option", { value: "", text: "— choose —" }));
    for (const name of cfg.entities) {
      if (exclude && exclude.includes(name) && name !== value) continue;
      select.append(el("option", { value: name, text: name, selected: name === value }));
    }
    return select;
  }

  function entityChecks(values, path, onChange, owner, opts) {
    const box = el("div", { class: "checks", dataset: { path } });
    for (const name of cfg.entities) {
      if (name === owner) continue; // nobody is their own target
      if (opts && opts.noTherapist && name === THERAPIST) continue;
      const id = `${path}-${name}`.replace(/[^\w-]/g, "_");
      const input = el("input", {
        type: "checkbox",
        id,
        checked: values.includes(name),
        disabled: readOnly,
        onchange: (e) => {
          let next = values.filter((v) => v !== name);
          if (e.target.checked) {
            next = [...next, name];
            // The group label stands alone in a strategy target.
            if (opts && opts.groupAlone) next = name === cfg.group_label ? [name] : next.filter((v) => v !== cfg.group_label);
          }
          onChange(cfg.entities.filter((n) => next.includes(n)));
        },
      });
      box.append(el("label", { class: "check", for: id }, input, name));
    }
    return box;
  }

  function textInput(value, path, onChange, multiline) {
    const attrs = { dataset: { path }, disabled: readOnly, value: multiline ? null : value || "" };
    const input = multiline ? el("textarea", { ...attrs, rows: "2" }) : el("input", { ...attrs, type: "text" });
    if (multiline) input.value = value || "";
    // Keep typing fluid: store on input without re-rendering, re-render on change.
    input.addEventListener("input", (e) => {
      onChange(e.target.value, true);
    });
    input.addEventListener("change", (e) => update(() => onChange(e.target.value, false)));
    return input;
  }
  function quietSet(mutator) {
    mutator(working);
    dirty = !same(working, rev().content);
    keepLocally();
    scheduleValidation();
  }

  // A label picker: shows the chosen label with its definition; opening it lists
  // every label with its definition, filters as you type, and shows the
  // boundary rules of whichever label is highlighted.
  function labelPicker({ fieldName, options, value, path, onChange, nullOption, blankOption }) {
    const choices = [];
    if (nullOption) choices.push({ label: null, title: nullOption, definition: "" });
    if (blankOption) choices.push({ label: "", title: blankOption, definition: "" });
    for (const o of options) choices.push({ label: o.label, title: o.label, definition: o.definition });
    const currentChoice = choices.find((c) => c.label === value);
    // Boundary rules of the chosen label sit under the field; while the list is
    // open, the rules of the highlighted label show under the list (below it, so
    // that their changing height never moves the option under the pointer).
    const rulesBox = el("div", { class: "rules", "aria-live": "polite" });
    const popRules = el("div", { class: "rules in-pop", "aria-live": "polite" });
    const showRules = (label, box) => {
      const rules = fieldName && label ? cfg.rules.filter((r) => r.field === fieldName && r.labels.includes(label)) : [];
      (box || rulesBox).replaceChildren(...rules.map((r) => el("div", { class: "rule" }, el("b", { text: r.title }), el("p", { text: r.text }))));
    };
    const button = el(
      "button",
      { type: "button", class: "picker-button", dataset: { path, picker: fieldName || path }, disabled: readOnly, "aria-haspopup": "listbox" },
      el("span", { class: "picker-value", text: currentChoice ? currentChoice.title : value ? String(value) : "— choose —" }),
      currentChoice && currentChoice.definition ? el("span", { class: "picker-def", text: currentChoice.definition }) : null
    );
    const list = el("ul", { class: "picker-list", role: "listbox" });
    const filter = el("input", { type: "text", class: "picker-filter", placeholder: "type to filter…", "aria-label": "filter labels" });
    const pop = el("div", { class: "picker-pop", hidden: true }, filter, list, popRules);
    let active = 0;
    let visible = choices;
    const draw = () => {
      const q = filter.value.trim().toLowerCase();
      visible = choices.filter((c) => !q || c.title.toLowerCase().includes(q) || (c.definition || "").toLowerCase().includes(q));
      active = Math.min(active, Math.max(visible.length - 1, 0));
      list.replaceChildren(
        ...visible.map((c, i) =>
          el(
            "li",
            {
              role: "option",
              class: i === active ? "active" : "",
              "aria-selected": c.label === value ? "true" : "false",
              onmouseenter: () => {
                active = i;
                showRules(c.label, popRules);
                markActive();
              },
              onmousedown: (e) => {
                e.preventDefault();
                choose(c);
              },
            },
            el("b", { text: c.title }),
            c.definition ? el("span", { text: c.definition }) : null
          )
        )
      );
      if (visible[active]) showRules(visible[active].label, popRules);
    };
    const markActive = () => [...list.children].forEach((li, i) => li.classList.toggle("active", i === active));
    const close = () => {
      pop.hidden = true;
      showRules(value);
    };
    const choose = (c) => {
      close();
      onChange(c.label);
    };
    button.addEventListener("click", () => {
      pop.hidden = !pop.hidden;
      if (!pop.hidden) {
        filter.value = "";
        active = Math.max(0, choices.findIndex((c) => c.label === value));
        draw();
        filter.focus();
        pop.scrollIntoView({ block: "nearest" });
      }
    });
    filter.addEventListener("input", () => {
      active = 0;
      draw();
    });
    filter.addEventListener("keydown", (e) => {
      if (e.key === "ArrowDown") active = Math.min(active + 1, visible.length - 1);
      else if (e.key === "ArrowUp") active = Math.max(active - 1, 0);
      else if (e.key === "Enter") {
        e.preventDefault();
        if (visible[active]) choose(visible[active]);
        return;
      } else if (e.key === "Escape") {
        e.stopPropagation();
        close();
        button.focus();
        return;
      } else return;
      e.preventDefault();
      markActive();
      if (visible[active]) showRules(visible[active].label, popRules);
    });
    filter.addEventListener("blur", () => setTimeout(close, 150));
    showRules(value);
    return el("div", { class: "picker" }, button, pop, rulesBox);
  }

  function listEditor({ key, title, items, renderItem, blank, keys }) {
    const box = el("div", { class: "list-field" });
    items.forEach((item, i) => {
      const move = (delta) =>
        update((w) => {
          const arr = w[key];
          const [x] = arr.splice(i, 1);
          arr.splice(i + delta, 0, x);
        });
      box.append(
        el(
          "div",
          { class: "entry", dataset: { path: `${key}[${i}]` } },
          el(
            "div",
            { class: "entry-tools" },
            el("span", { class: "muted", text: `#${i + 1}` }),
            readOnly ? null : el("button", { type: "button", class: "icon", title: "move up", disabled: i === 0, onclick: () => move(-1), text: "↑" }),
            readOnly ? null : el("button", { type: "button", class: "icon", title: "move down", disabled: i === items.length - 1, onclick: () => move(1), text: "↓" }),
            readOnly ? null : el("button", { type: "button", class: "icon danger", title: "remove", onclick: () => update((w) => w[key].splice(i, 1)), text: "✕" })
          ),
          renderItem(item, i, `${key}[${i}]`)
        )
      );
    });
    if (!readOnly) box.append(el("button", { type: "button", class: "add", onclick: () => update((w) => (w[key] = [...(w[key] || []), blank()])), text: `+ add ${title}` }));
    return field(title, key, box, keys || [key]);
  }

  function personDescription(key, title) {
    return listEditor({
      key,
      title,
      items: working[key] || [],
      blank: () => ({ person: row().primary_speaker, description: "" }),
      renderItem: (item, i, path) =>
        el(
          "div",
          { class: "grid2" },
          field("person", `${path}.person`, entitySelect(item.person, `${path}.person`, (v) => update((w) => (w[key][i].person = v)))),
          field("description", `${path}.description`, textInput(item.description, `${path}.description`, (v, quiet) => (quiet ? quietSet : update)((w) => (w[key][i].description = v))))
        ),
    });
  }

  function renderEditor() {
    const r = row();
    const editor = document.getElementById("editor");
    const focusedPath = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.path : null;
    const isTherapist = r.primary_speaker === THERAPIST;
    const [relKey, reasonKey, evidenceKey] = r.relation_keys;
    const sections = {};
    for (const [id, title] of SECTIONS) sections[id] = el("section", { class: "dim", id: `dim-${id}`, tabindex: "-1" }, el("h3", { text: title }));

    // 1. timing and entities
    sections.timing.append(
      el("p", { class: "facts" }, `${fmtTime(r.start_time)}–${fmtTime(r.end_time)} (${(r.end_time - r.start_time).toFixed(1)} s) · speaker `, el("b", { text: r.primary_speaker })),
      field("Target (whom the speaker addresses)", "target", entityChecks(working.target || [], "target", (v) => update((w) => (w.target = v)), r.primary_speaker), ["target"])
    );
    // 2. verbal content
    if (!isTherapist) {
      sections.verbal.append(
        field(
          "Utterance type",
          "utterance_type",
          labelPicker({ fieldName: "utterance_type", options: cfg.utterance_types, value: working.utterance_type, path: "utterance_type", onChange: (v) => update((w) => (w.utterance_type = v)) }),
          ["utterance_type"],
          "The main function of the turn, not its emotion."
        )
      );
    } else {
      sections.verbal.append(el("p", { class: "muted", text: "Utterance type does not apply to therapist rows." }));
    }
    sections.verbal.append(
      listEditor({
        key: "background_dialogue",
        title: "background dialogue",
        items: working.background_dialogue || [],
        blank: () => ({ speaker: "", target: [], content: "" }),
        renderItem: (item, i, path) =>
          el(
            "div",
            {},
            field("speaker", `${path}.speaker`, entitySelect(item.speaker, `${path}.speaker`, (v) => update((w) => (w.background_dialogue[i].speaker = v)))),
            field("target", `${path}.target`, entityChecks(item.target || [], `${path}.target`, (v) => update((w) => (w.background_dialogue[i].target = v)), item.speaker)),
            field("words", `${path}.content`, textInput(item.content, `${path}.content`, (v, quiet) => (quiet ? quietSet : update)((w) => (w.background_dialogue[i].content = v))))
          ),
      })
    );
    // 3. individual cues
    sections.cues.append(
      field("Tone of voice", "tone_of_voice", textInput(working.tone_of_voice, "tone_of_voice", (v, quiet) => (quiet ? quietSet : update)((w) => (w.tone_of_voice = v))), ["tone_of_voice"]),
      personDescription("body_posture", "body posture"),
      personDescription("facial_expressions", "facial expression"),
      personDescription("self_directed_behavior", "self-directed behaviour"),
      listEditor({
        key: "internal_emotion",
        title: "internal emotion",
        items: working.internal_emotion || [],
        blank: () => ({ person: r.primary_speaker, emotion_description: "", intensity: 5 }),
        renderItem: (item, i, path) =>
          el(
            "div",
            { class: "grid3" },
            field("person", `${path}.person`, entitySelect(item.person, `${path}.person`, (v) => update((w) => (w.internal_emotion[i].person = v)))),
            field("emotion", `${path}.emotion_description`, textInput(item.emotion_description, `${path}.emotion_description`, (v, quiet) => (quiet ? quietSet : update)((w) => (w.internal_emotion[i].emotion_description = v)))),
            field(
              `intensity ${item.intensity}`,
              `${path}.intensity`,
              el("input", {
                type: "range",
                min: "0",
                max: "10",
                step: "1",
                value: String(item.intensity),
                dataset: { path: `${path}.intensity` },
                disabled: readOnly,
                "aria-label": "intensity 0 to 10",
                onchange: (e) => update((w) => (w.internal_emotion[i].intensity = parseInt(e.target.value, 10))),
              })
            )
          ),
      })
    );
    // 4. relational stance
    sections.stance.append(
      listEditor({
        key: "interaction_behavior",
        title: "interaction behaviour",
        items: working.interaction_behavior || [],
        blank: () => ({ initiator: r.primary_speaker, target: [], description: "" }),
        renderItem: (item, i, path) =>
          el(
            "div",
            {},
            field("initiator", `${path}.initiator`, entitySelect(item.initiator, `${path}.initiator`, (v) => update((w) => (w.interaction_behavior[i].initiator = v)))),
            field("toward", `${path}.target`, entityChecks(item.target || [], `${path}.target`, (v) => update((w) => (w.interaction_behavior[i].target = v)), item.initiator)),
            field("what they do", `${path}.description`, textInput(item.description, `${path}.description`, (v, quiet) => (quiet ? quietSet : update)((w) => (w.interaction_behavior[i].description = v))))
          ),
      }),
      listEditor({
        key: "viewpoints_attitudes",
        title: "viewpoint",
        items: working.viewpoints_attitudes || [],
        blank: () => ({ source: r.primary_speaker, target: "", viewpoint: "", attitude: "" }),
        renderItem: (item, i, path) =>
          el(
            "div",
            { class: "grid2" },
            field("source", `${path}.source`, entitySelect(item.source, `${path}.source`, (v) => update((w) => (w.viewpoints_attitudes[i].source = v)))),
            field("about", `${path}.target`, entitySelect(item.target, `${path}.target`, (v) => update((w) => (w.viewpoints_attitudes[i].target = v)), [item.source])),
            field("viewpoint", `${path}.viewpoint`, textInput(item.viewpoint, `${path}.viewpoint`, (v, quiet) => (quiet ? quietSet : update)((w) => (w.viewpoints_attitudes[i].viewpoint = v)))),
            field("attitude", `${path}.attitude`, textInput(item.attitude, `${path}.attitude`, (v, quiet) => (quiet ? quietSet : update)((w) => (w.viewpoints_attitudes[i].attitude = v))))
          ),
      })
    );
    // 5. therapist strategy
    if (isTherapist) {
      sections.strategy.append(
        listEditor({
          key: "support_strategy",
          title: "strategy",
          items: working.support_strategy || [],
          blank: () => ({ provider: THERAPIST, target: [], strategy_type: "", strategy_content: "" }),
          renderItem: (item, i, path) =>
            el(
              "div",
              {},
              field(
                "strategy",
                `${path}.strategy_type`,
                labelPicker({ fieldName: "support_strategy", options: cfg.support_strategies, value: item.strategy_type, path: `${path}.strategy_type`, onChange: (v) => update((w) => (w.support_strategy[i].strategy_type = v)) })
              ),
              field("for", `${path}.target`, entityChecks(item.target || [], `${path}.target`, (v) => update((w) => (w.support_strategy[i].target = v)), THERAPIST, { noTherapist: true, groupAlone: true })),
              field("what the therapist does", `${path}.strategy_content`, textInput(item.strategy_content, `${path}.strategy_content`, (v, quiet) => (quiet ? quietSet : update)((w) => (w.support_strategy[i].strategy_content = v)), true))
            ),
        })
      );
      sections.strategy.append(el("p", { class: "hint", text: "Leave empty for backchannels, plain hand-offs and fact-finding questions." }));
    } else {
      sections.strategy.append(el("p", { class: "muted", text: "Support strategies apply to therapist rows only." }));
    }
    // 6. relation pattern
    sections.relation.append(
      field(
        "Relation pattern",
        relKey,
        labelPicker({
          fieldName: "relation_pattern",
          options: cfg.relation_patterns,
          value: working[relKey] === undefined ? null : working[relKey],
          path: relKey,
          nullOption: "— not annotated",
          blankOption: "no clear pattern",
          onChange: (v) =>
            update((w) => {
              w[relKey] = relKey === "relation_cycle_state" && v === null ? "" : v;
              if (v === null) {
                w[reasonKey] = relKey === "relation_cycle_state" ? "" : null;
                w[evidenceKey] = [];
              }
            }),
        }),
        [relKey, reasonKey, evidenceKey]
      ),
      field("Reason (short, evidence-based)", reasonKey, textInput(working[reasonKey], reasonKey, (v, quiet) => (quiet ? quietSet : update)((w) => (w[reasonKey] = v)), true)),
      field(
        "Evidence rows",
        evidenceKey,
        textInput((working[evidenceKey] || []).join(", "), evidenceKey, (v, quiet) =>
          (quiet ? quietSet : update)((w) => {
            w[evidenceKey] = v
              .split(/[\s,;]+/)
              .filter(Boolean)
              .map((x) => (/^\d+$/.test(x) ? parseInt(x, 10) : x));
          })
        ),
        null,
        `Row numbers of this clip, e.g. "3, 4, ${r.row_index}".`
      )
    );

    const warnings = [...(compareToDraft && r.draft ? r.draft.warnings : []).map((w) => ["draft", w]), ...(rev() ? rev().warnings : []).map((w) => ["revision", w])];
    const head = el(
      "div",
      { class: "editor-head" },
      el("h2", {}, `Row ${r.row_index} `, el("span", { class: "muted", text: `of ${rows.length}` })),
      el("blockquote", { class: "dialogue", text: r.dialogue_cleaned || "(no words: a nonverbal reaction row)" }),
      warnings.length
        ? el("ul", { class: "row-warnings" }, ...warnings.map(([src, w]) => el("li", { text: `⚠ ${src === "draft" ? "LLM draft" : DOC_TITLE}: ${w.path ? w.path + ": " : ""}${w.message}` })))
        : null,
      el("ul", { class: "issues", id: "general-issues" })
    );
    const actions = readOnly
      ? el("div")
      : el(
          "div",
          { class: "editor-actions" },
          el("button", { type: "button", id: "save", onclick: () => save({}), text: "Save" }),
          el("button", { type: "button", id: "save-next", class: "primary", onclick: () => save({ next: true }), text: "Save and next" }),
          DOC === "revision" ? el("button", { type: "button", id: "mark-reviewed", onclick: () => markReviewed(), text: rev().status === "reviewed" ? "Reviewed ✓ (reopen)" : "Mark reviewed" }) : null,
          el("span", { id: "save-state", class: "muted", text: dirty ? "unsaved changes (kept in this browser)" : rev().version ? `saved · version ${rev().version}` : `no ${DOC_TITLE} saved yet` }),
          el("nav", { class: "dim-nav", "aria-label": "dimensions" }, ...SECTIONS.map(([id, title], n) => el("a", { href: `#dim-${id}`, title, onclick: (e) => (e.preventDefault(), jumpTo(n + 1)), text: String(n + 1) })))
        );
    const comments = renderRowComments();
    const extra = hooks.beforeSections ? hooks.beforeSections(r, working) : null;
    editor.replaceChildren(head, actions, ...(extra ? [extra] : []), ...SECTIONS.map(([id]) => sections[id]), comments);
    showIssues();
    if (focusedPath) {
      const again = editor.querySelector(`[data-path="${CSS.escape(focusedPath)}"]:is(input, select, textarea, button)`);
      if (again) again.focus();
    }
  }

  function renderRowComments() {
    const r = row();
    const mine = data.comments.filter((c) => c.row === r.row_index);
    const box = el("section", { class: "dim comments", id: "row-comments" }, el("h3", { text: "Comments and flags on this row" }));
    box.append(el("ul", { class: "comment-list" }, ...mine.map((c) => el("li", {}, el("span", { class: "chip", text: c.kind.replace("_", " ") }), " ", el("span", { text: c.body }), el("span", { class: "muted", text: ` — ${c.author}` })))));
    if (!readOnly) {
      const kind = el("select", { "aria-label": "comment kind" }, el("option", { value: "comment", text: "Comment" }), el("option", { value: "flag_split", text: "Flag: should be split" }), el("option", { value: "flag_merge", text: "Flag: should be merged" }));
      const body = el("textarea", { rows: "2", "aria-label": "comment text", placeholder: "What should a lead know about this row?" });
      box.append(
        el(
          "form",
          {
            class: "stack",
            onsubmit: async (e) => {
              e.preventDefault();
              const res = await api("POST", `/api/v1/clips/${data.clip.id}/comments/`, { row: r.row_index, kind: kind.value, body: body.value });
              if (res.status === 201) {
                data.comments.push(res.json);
                r.commented = true;
                renderEditor();
                renderRowList();
              } else banner(res.json.detail || JSON.stringify(res.json), "error");
            },
          },
          kind,
          body,
          el("button", { type: "submit", text: "Add" })
        )
      );
    }
    return box;
  }

  // ------------------------------------------------------------ validation
  function scheduleValidation() {
    clearTimeout(validateTimer);
    validateTimer = setTimeout(validateNow, 350);
  }
  async function validateNow() {
    if (readOnly || !rev()) return;
    const target = pos;
    const res = await api("POST", docUrl(row(), "validate"), { content: working });
    if (target !== pos || res.status !== 200) return;
    issues = res.json.issues || [];
    showIssues();
  }
  function showIssues() {
    const editor = document.getElementById("editor");
    editor.querySelectorAll(".field-error").forEach((n) => n.remove());
    editor.querySelectorAll(".has-error").forEach((n) => n.classList.remove("has-error"));
    const general = document.getElementById("general-issues");
    if (general) general.replaceChildren();
    for (const issue of issues) {
      let path = issue.path;
      let host = null;
      while (path && !host) {
        host = editor.querySelector(`.field[data-path="${CSS.escape(path)}"], .entry[data-path="${CSS.escape(path)}"]`);
        if (!host) path = path.replace(/(\.[^.[\]]+|\[\d+\])$/, "") === path ? "" : path.replace(/(\.[^.[\]]+|\[\d+\])$/, "");
      }
      const msg = el("p", { class: "field-error", role: "alert", text: host && path === issue.path ? issue.message : `${issue.path}: ${issue.message}` });
      if (host) {
        host.classList.add("has-error");
        host.append(msg);
      } else if (general) general.append(el("li", { text: `${issue.path ? issue.path + ": " : ""}${issue.message}` }));
    }
  }

  // ------------------------------------------------------------- saving
  async function save({ next, reviewed }) {
    if (readOnly) return false;
    const r = row();
    const body = { content: working, version: r[DOC].version };
    if (reviewed !== undefined) body.reviewed = reviewed;
    if (hooks.saveBody) hooks.saveBody(r, body);
    const res = await api("PUT", docUrl(r), body);
    if (res.status === 200) {
      r[DOC] = { ...r[DOC], ...res.json };
      if (hooks.afterSave) hooks.afterSave(r, res.json);
      dropLocal(r);
      dirty = false;
      issues = [];
      clearBanner();
      renderRowList();
      if (next && nextVisible(1) !== null) openRow(nextVisible(1), true);
      else renderEditor();
      return true;
    }
    if (res.status === 422) {
      issues = res.json.issues || [];
      renderEditor();
      banner(res.json.detail || "The row was not saved.", "error");
    } else if (res.status === 409) {
      showMerge(res.json);
    } else {
      banner(`Not saved: ${res.json.detail || res.status}. Your edits are kept in this browser.`, "error");
    }
    return false;
  }

  async function markReviewed() {
    if (readOnly || DOC !== "revision") return;
    const r = row();
    const reopen = r.revision.status === "reviewed" && !dirty;
    if (dirty) return save({ reviewed: true });
    const res = await api("POST", revisionUrl(r.revision.id, "review"), { version: r.revision.version, reviewed: !reopen });
    if (res.status === 200) {
      r.revision = { ...r.revision, ...res.json };
      issues = [];
      clearBanner();
      renderRowList();
      renderEditor();
    } else if (res.status === 409) showMerge(res.json);
    else {
      issues = res.json.issues || [];
      renderEditor();
      banner(res.json.detail || "Could not mark the row reviewed.", "error");
    }
  }

  // A stale save: show what changed on the server beside the local edit, field
  // by field, and let the annotator choose; nothing is dropped silently.
  function showMerge(payload) {
    const r = row();
    const theirs = payload.current;
    const mine = working;
    const base = r[DOC].content; // what this editor started from
    const keys = [...new Set([...Object.keys(theirs.content), ...Object.keys(mine)])].filter((k) => !same(theirs.content[k], mine[k]));
    // Three-way default: keep my value where I changed the field, theirs where only they did.
    const choice = {};
    keys.forEach((k) => (choice[k] = same(mine[k], base[k]) ? "theirs" : "mine"));
    const summary = (v) => (v === undefined ? "(absent)" : typeof v === "string" ? v || '""' : JSON.stringify(v));
    const table = el(
      "table",
      { class: "merge" },
      el("thead", {}, el("tr", {}, el("th", { text: "field" }), el("th", { text: `saved elsewhere (version ${theirs.version})` }), el("th", { text: "yours (not saved)" }))),
      el(
        "tbody",
        {},
        ...keys.map((k) =>
          el(
            "tr",
            {},
            el("td", { text: k }),
            el("td", {}, el("label", {}, el("input", { type: "radio", name: `m-${k}`, checked: choice[k] === "theirs", onchange: () => (choice[k] = "theirs") }), " ", el("code", { text: summary(theirs.content[k]) }))),
            el("td", {}, el("label", {}, el("input", { type: "radio", name: `m-${k}`, checked: choice[k] === "mine", onchange: () => (choice[k] = "mine") }), " ", el("code", { text: summary(mine[k]) })))
          )
        )
      )
    );
    const apply = el("button", {
      type: "button",
      class: "primary",
      id: "merge-save",
      text: "Save the merged row",
      onclick: async () => {
        const merged = clone(theirs.content);
        keys.forEach((k) => {
          if (choice[k] === "mine") merged[k] = clone(mine[k]);
        });
        r[DOC] = { ...r[DOC], version: theirs.version, content: theirs.content, status: theirs.status };
        working = merged;
        dirty = true;
        keepLocally();
        box.remove();
        await save({});
      },
    });
    const discard = el("button", {
      type: "button",
      text: "Take the saved version, drop mine",
      onclick: () => {
        r[DOC] = { ...r[DOC], ...theirs };
        dropLocal(r);
        working = clone(theirs.content);
        dirty = false;
        box.remove();
        clearBanner();
        renderEditor();
        renderRowList();
      },
    });
    document.getElementById("merge-box")?.remove();
    const box = el("div", { class: "merge-box", id: "merge-box", role: "alert" }, el("h3", { text: "This row was changed elsewhere" }), el("p", { text: payload.detail || "" }), table, el("div", { class: "editor-actions" }, apply, discard));
    document.getElementById("editor").prepend(box);
    banner("Your save was refused because the row changed since you opened it. Choose field by field below; nothing has been lost.", "warn");
  }

  // ------------------------------------------------------------- navigation
  // The position of the next (delta 1) or previous (-1) row shown in the list, or null.
  function nextVisible(delta) {
    for (let i = pos + delta; i >= 0 && i < rows.length; i += delta) if (visible(rows[i])) return i;
    return null;
  }
  function step(delta) {
    const i = nextVisible(delta);
    if (i !== null) openRow(i, true);
  }
  // Take the server's copy of the open row's document (after a write made
  // elsewhere on the page): `keys` take the server's value; any other key the
  // editor changed keeps the unsaved edit.
  function adopt(r, serverDoc, keys) {
    const before = r[DOC];
    r[DOC] = { ...before, ...serverDoc };
    if (r === row()) {
      const next = clone(serverDoc.content);
      if (dirty) {
        for (const k of Object.keys(working)) {
          if (!keys.includes(k) && !same(working[k], before.content[k])) next[k] = clone(working[k]);
        }
      }
      working = next;
      dirty = !same(working, r[DOC].content);
      if (dirty) keepLocally();
      else dropLocal(r);
      renderEditor();
      if (dirty) scheduleValidation();
    }
    renderRowList();
  }

  function openRow(i, scroll) {
    if (i < 0 || i >= rows.length) return;
    pos = i;
    const r = row();
    issues = [];
    working = clone(r[DOC] ? r[DOC].content : r.draft ? r.draft.content : {});
    dirty = false;
    const local = localCopy(r);
    if (local && r[DOC] && !same(local.content, r[DOC].content)) {
      working = local.content;
      dirty = true;
      if (local.version !== r[DOC].version) {
        renderEditor();
        showMerge({ detail: "Unsaved edits from an earlier session were based on an older version of this row.", current: { ...r[DOC] } });
      } else {
        banner(`Restored unsaved edits from ${new Date(local.at).toLocaleString()}.`, "info", [
          el("button", {
            type: "button",
            class: "link",
            text: "Discard them",
            onclick: () => {
              dropLocal(r);
              clearBanner();
              openRow(pos, false);
              renderRowList();
            },
          }),
        ]);
      }
    } else {
      clearBanner();
    }
    history.replaceState(null, "", `#row-${r.row_index}`);
    renderRowList();
    renderEditor();
    if (dirty) scheduleValidation();
    if (scroll) document.getElementById(`row-${r.row_index}`)?.scrollIntoView({ block: "nearest" });
    if (media && scroll && media.paused) media.currentTime = r.start_time;
  }

  // ------------------------------------------------------------- media
  function setupMedia() {
    if (!document.getElementById("player-box")) return;
    if (!data.clip.media_url) {
      document.getElementById("player-box").append(el("p", { class: "muted", text: "No media for this clip." }));
      return;
    }
    media = el(data.clip.media_kind === "audio" ? "audio" : "video", { controls: true, preload: "metadata", src: data.clip.media_url, id: "player" });
    document.getElementById("player-box").append(media);
    media.addEventListener("timeupdate", () => {
      const t = media.currentTime;
      if (stopAt !== null && t >= stopAt) {
        media.pause();
        stopAt = null;
      }
      document.querySelectorAll("#row-list tr.playing").forEach((n) => n.classList.remove("playing"));
      const playing = rows.find((r) => t >= r.start_time && t < r.end_time);
      if (playing) document.getElementById(`row-${playing.row_index}`)?.classList.add("playing");
    });
  }
  function replayRow() {
    if (!media) return;
    media.currentTime = row().start_time;
    stopAt = row().end_time;
    media.play();
  }

  // ------------------------------------------------------------- keyboard
  function typing(target) {
    return target && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName));
  }
  function jumpTo(n) {
    const id = SECTIONS[n - 1] && SECTIONS[n - 1][0];
    const section = id && document.getElementById(`dim-${id}`);
    if (!section) return;
    section.scrollIntoView({ block: "start" });
    const first = section.querySelector("input:not([disabled]), select:not([disabled]), textarea:not([disabled]), button.picker-button:not([disabled])");
    (first || section).focus();
  }
  function toggleHelp(show) {
    document.getElementById("help").hidden = !show;
    if (show) document.getElementById("close-help").focus();
  }
  document.addEventListener("keydown", (e) => {
    const inField = typing(e.target);
    if ((e.ctrlKey || e.metaKey) && e.key === "s") {
      e.preventDefault();
      save({});
    } else if ((e.ctrlKey || e.metaKey) && e.key === "Enter") {
      e.preventDefault();
      save({ next: true });
    } else if (e.altKey && e.key === "ArrowDown") {
      e.preventDefault();
      step(1);
    } else if (e.altKey && e.key === "ArrowUp") {
      e.preventDefault();
      step(-1);
    } else if (e.altKey && (e.key === "m" || e.key === "M" || e.code === "KeyM")) {
      e.preventDefault();
      markReviewed();
    } else if (e.altKey && /^Digit[1-6]$/.test(e.code)) {
      e.preventDefault();
      jumpTo(parseInt(e.code.slice(5), 10));
    } else if (e.key === "Escape") {
      if (!document.getElementById("help").hidden) toggleHelp(false);
      else if (inField) e.target.blur();
    } else if (!inField && !e.ctrlKey && !e.metaKey && !e.altKey) {
      const actions = {
        j: () => step(1),
        k: () => step(-1),
        m: () => markReviewed(),
        p: () => media && (media.paused ? media.play() : media.pause()),
        r: () => replayRow(),
        "?": () => toggleHelp(true),
        l: () => {
          const section = document.activeElement && document.activeElement.closest ? document.activeElement.closest(".dim") : null;
          const picker = (section && section.querySelector("button.picker-button:not([disabled])")) || document.querySelector("#dim-relation button.picker-button:not([disabled])");
          if (picker) picker.click();
        },
      };
      if (/^[1-6]$/.test(e.key)) {
        e.preventDefault();
        jumpTo(parseInt(e.key, 10));
      } else if (actions[e.key]) {
        e.preventDefault();
        actions[e.key]();
      }
    }
  });

  // ------------------------------------------------------------- clip-level
  function renderCues() {
    if (!document.getElementById("cue-list")) return;
    document.getElementById("cue-list").replaceChildren(...data.cues.map((c) => el("li", {}, el("span", { class: "muted", text: `${fmtTime(c.start)} ` }), c.speaker ? el("b", { text: `${c.speaker}: ` }) : null, el("span", { text: c.text }))));
  }
  function renderClipComments() {
    const list = document.getElementById("clip-comment-list");
    if (!list) return;
    list.replaceChildren(...data.comments.filter((c) => c.row === null).map((c) => el("li", {}, el("span", { class: "chip", text: c.kind.replace("_", " ") }), " ", el("span", { text: c.body }), el("span", { class: "muted", text: ` — ${c.author}` }))));
  }
  const clipForm = document.getElementById("clip-comment-form");
  if (clipForm) {
    clipForm.addEventListener("submit", async (e) => {
      e.preventDefault();
      const body = document.getElementById("clip-comment-body");
      const kind = document.getElementById("clip-comment-kind");
      const res = await api("POST", `/api/v1/clips/${data.clip.id}/comments/`, { row: null, kind: kind.value, body: body.value });
      if (res.status === 201) {
        data.comments.push(res.json);
        body.value = "";
        renderClipComments();
        banner(kind.value === "discard_proposal" ? "Discard proposal sent to the leads." : "Comment added.", "info");
      } else banner(res.json.detail || JSON.stringify(res.json), "error");
    });
  }
  const submitButton = document.getElementById("submit-clip");
  if (submitButton) {
    submitButton.addEventListener("click", async () => {
      const res = await api("POST", `/api/v1/assignments/${data.assignment.id}/submit/`);
      if (res.status === 200) {
        data.assignment.state = "submitted";
        banner("Clip submitted. Thank you!", "success");
      } else banner(res.json.detail || "Could not submit the clip.", "error");
    });
  }
  document.getElementById("open-help").addEventListener("click", () => toggleHelp(true));
  document.getElementById("close-help").addEventListener("click", () => toggleHelp(false));
  window.addEventListener("beforeunload", () => {
    if (dirty) keepLocally();
  });

  // ------------------------------------------------------------- start
  if (hooks.setup) {
    hooks.setup({
      el,
      api,
      banner,
      clearBanner,
      data,
      rows,
      adopt,
      openRow,
      current: () => ({ row: rows.length ? row() : null, pos, working, dirty }),
      refresh: () => {
        renderRowList();
        if (rows.length) renderEditor();
      },
    });
  }
  setupMedia();
  renderCues();
  renderClipComments();
  const wanted = parseInt((location.hash.match(/^#row-(\d+)$/) || [])[1], 10);
  const startAt = rows.findIndex((r) => r.row_index === wanted);
  const firstShown = Math.max(rows.findIndex(visible), 0);
  if (rows.length) openRow(startAt >= 0 ? startAt : firstShown, true);
  else document.getElementById("editor").append(el("p", { class: "empty", text: "This clip has no rows yet." }));
})();
