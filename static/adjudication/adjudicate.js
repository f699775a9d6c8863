/* The lead's adjudication page: what it adds to the shared row editor.
 *
 * static/workspace/editor.js draws the row list and edits the row's gold
 * (the embedded data tells it so); this file plugs into it through
 * window.RowEditorHooks: the row filters, the table that sets the LLM draft
 * and every coder side by side with disputed fields marked, a "take" button
 * per source and field, and a note per decision. It must load before
 * editor.js. Every text from coders and the LLM goes in with textContent.
 */
(function () {
  "use strict";

  const data = JSON.parse(document.getElementById("workspace-data").textContent);
  const FIELDS = data.fields; // [{name, title, keys}]
  const CODERS = data.coders.map((c) => c.username);
  const editable = data.clip.editable && document.getElementById("workspace").dataset.readOnly !== "true";
  const filters = { ...data.filters };
  const pendingNotes = {}; // row_id -> {field: note}, sent with the next decision on that field
  const ALL_FIELDS_KEY = "rescue:adj:all-fields";
  let showAll = localStorage.getItem(ALL_FIELDS_KEY) === "1";
  let ed = null; // the editor's interface, given to setup()
  let sentNotes = []; // fields whose pending note went with the save in flight

  // ---------------------------------------------------------------- values
  function stable(v) {
    // JSON with sorted object keys: imported documents may order nested keys differently.
    if (Array.isArray(v)) return `[${v.map(stable).join(",")}]`;
    if (v && typeof v === "object") return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${stable(v[k])}`).join(",")}}`;
    return JSON.stringify(v === undefined ? null : v);
  }
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
  const decideUrl = (r) => data.endpoints.decide.replace("{row}", r.row_id);

  // ---------------------------------------------------------------- filters
  function rowVisible(r) {
    if (filters.disagreements && !r.disputed.length) return false;
    if (filters.open && adjudicated(r)) return false;
    if (filters.field && !r.disputed.includes(filters.field)) return false;
    if (filters.label && !r.labels.includes(filters.label)) return false;
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
  function showCount() {
    const shown = ed.rows.filter(rowVisible).length;
    document.getElementById("filter-count").textContent = shown === ed.rows.length ? `${shown} rows` : `${shown} of ${ed.rows.length} rows`;
  }
  function wireFilters() {
    const form = document.getElementById("filters");
    form.addEventListener("submit", (e) => e.preventDefault());
    form.addEventListener("change", () => {
      filters.disagreements = document.getElementById("f-disagreements").checked;
      filters.open = document.getElementById("f-open").checked;
      filters.field = document.getElementById("f-field").value;
      filters.label = document.getElementById("f-label").value;
      filters.annotator = document.getElementById("f-annotator").value;
      history.replaceState(null, "", `${location.pathname}${filterQuery()}${location.hash}`);
      const { row } = ed.current();
      if (row && !rowVisible(row)) {
        const first = ed.rows.findIndex(rowVisible);
        if (first >= 0) ed.openRow(first, true);
      }
      ed.refresh();
      showCount();
    });
    // Clip-level forms come back to the same filters and row.
    document.querySelectorAll("form.clip-action").forEach((f) =>
      f.addEventListener("submit", () => {
        const { row } = ed.current();
        f.action = f.getAttribute("action").split("?")[0] + filterQuery();
        if (row) f.append(ed.el("input", { type: "hidden", name: "row", value: String(row.row_index) }));
      })
    );
  }

  // ---------------------------------------------------------------- how values read
  function people(list) {
    return (list || []).join(", ") || "nobody";
  }
  function entries(items, fmt) {
    if (!items || !items.length) return ed.el("span", { class: "none", text: "none" });
    if (items.length === 1) return ed.el("span", { text: fmt(items[0]) });
    return ed.el("ul", { class: "entries" }, ...items.map((e) => ed.el("li", { text: fmt(e) })));
  }
  function shown(f, v, r) {
    const el = ed.el;
    if (v === undefined) return el("span", { class: "none", text: "—" });
    switch (f.name) {
      case "target":
        return el("span", { text: people(v) });
      case "utterance_type":
      case "tone_of_voice":
        return v ? el("span", { text: v }) : el("span", { class: "none", text: "—" });
      case "background_dialogue":
        return entries(v, (e) => `${e.speaker} → ${people(e.target)}: “${e.content}”`);
      case "interaction_behavior":
        return entries(v, (e) => `${e.initiator} → ${people(e.target)}: ${e.description}`);
      case "internal_emotion":
        return entries(v, (e) => `${e.person}: ${e.emotion_description} (${e.intensity})`);
      case "viewpoints_attitudes":
        return entries(v, (e) => `${e.source} → ${e.target}: ${e.viewpoint}; ${e.attitude}`);
      case "support_strategy":
        return entries(v, (e) => `${e.strategy_type} → ${people(e.target)}: ${e.strategy_content}`);
      case "relation_pattern": {
        const [labelKey, reasonKey, evidenceKey] = r.relation_keys;
        const label = v[labelKey];
        const head = label === null || label === undefined ? "not annotated" : label === "" ? "no clear pattern" : label;
        const evidence = v[evidenceKey] || [];
        return el(
          "span",
          {},
          el("b", { class: label ? "" : "none", text: head }),
          v[reasonKey] ? el("span", { class: "reason", text: ` — ${v[reasonKey]}` }) : null,
          evidence.length ? el("span", { class: "evidence", text: ` [rows ${evidence.join(", ")}]` }) : null
        );
      }
      default:
        return entries(v, (e) => `${e.person}: ${e.description}`);
    }
  }
  function decisionText(d) {
    const source = { edit: "edited", confirmed: "kept as it was", unanimous: "unanimous", draft: "taken from the draft" }[d.source] || `taken from ${d.source}`;
    const also = (d.same_as || []).filter((s) => s !== d.source);
    return `${source}${also.length ? ` (= ${also.join(", ")})` : ""} · ${d.by}`;
  }

  // ---------------------------------------------------------------- decisions
  async function take(r, f, source) {
    const note = (pendingNotes[r.row_id] || {})[f.name];
    const res = await ed.api("POST", decideUrl(r), { field: f.name, source, version: r.gold.version, note: note === undefined ? null : note });
    if (res.status === 200) {
      if (pendingNotes[r.row_id]) delete pendingNotes[r.row_id][f.name];
      ed.clearBanner();
      ed.adopt(r, res.json, f.keys);
    } else if (res.status === 409) {
      ed.adopt(r, res.json.current, []);
      ed.banner("This row's gold was changed elsewhere; its current version is loaded. Take the value again if you still want it.", "warn");
    } else {
      ed.banner(res.json.detail || `Not taken (the server answered ${res.status}).`, "error");
    }
  }
  async function saveNote(r, f, text) {
    if (!decisions(r)[f.name]) {
      pendingNotes[r.row_id] = { ...(pendingNotes[r.row_id] || {}), [f.name]: text };
      return;
    }
    if ((decisions(r)[f.name].note || "") === text) return;
    const res = await ed.api("POST", decideUrl(r), { field: f.name, source: "gold", version: r.gold.version, note: text });
    if (res.status === 200) ed.adopt(r, res.json, []);
    else ed.banner(res.json.detail || `Note not saved (the server answered ${res.status}).`, "error");
  }

  // ---------------------------------------------------------------- the table
  // A username may break after "_", "." or "-" (long names in narrow columns).
  function breakable(name) {
    const out = [];
    name.split(/(?<=[_.-])/).forEach((part, i) => {
      if (i) out.push(ed.el("wbr"));
      out.push(part);
    });
    return out;
  }
  function compareTable(r) {
    const el = ed.el;
    const disputed = new Set(r.disputed);
    const open = new Set(undecided(r));
    const rowsShown = FIELDS.filter((f) => showAll || disputed.has(f.name));
    const sources = [...(r.draft ? [["draft", "LLM draft", r.draft.content]] : []), ...CODERS.filter((c) => r.coders[c]).map((c) => [c, c, r.coders[c].content])];
    const toggle = el("label", { class: "check all-fields" }, el("input", {
      type: "checkbox",
      id: "show-all-fields",
      checked: showAll,
      onchange: (e) => {
        showAll = e.target.checked;
        localStorage.setItem(ALL_FIELDS_KEY, showAll ? "1" : "0");
        ed.refresh();
      },
    }), " all fields");
    const headline = !CODERS.length
      ? "No coder has worked on this clip yet."
      : !Object.keys(r.coders).length
        ? "No coder has a revision of this row."
        : disputed.size
          ? `${disputed.size} disputed field${disputed.size > 1 ? "s" : ""}, ${open.size} still open`
          : "Every coder gave the same annotation.";
    const box = el("section", { class: "compare", id: "compare", "aria-label": "Sources side by side" }, el("div", { class: "compare-head" }, el("h3", { text: "Sources side by side" }), el("span", { class: "muted", text: headline }), toggle));
    if (!rowsShown.length) return box;
    const head = el("tr", {}, el("th", { class: "f", text: "Field" }), ...sources.map(([id, title]) => el("th", { class: id === "draft" ? "draft" : "", title }, ...breakable(title))), el("th", { class: "gold", text: "Gold" }));
    const body = rowsShown.map((f) => {
      const goldValue = fieldValue(r.gold.content, f);
      const d = decisions(r)[f.name];
      const isOpen = open.has(f.name);
      const note = (pendingNotes[r.row_id] || {})[f.name] ?? (d ? d.note || "" : "");
      // Notes belong to decisions: on disputed fields, and wherever the lead changed the value.
      const wantsNote = disputed.has(f.name) || (d && (d.source === "edit" || d.note));
      const noteInput = !wantsNote ? null : el("input", {
        type: "text",
        class: "decision-note",
        placeholder: d ? "note…" : "note (goes with the decision)",
        "aria-label": `note on ${f.title}`,
        value: note,
        disabled: !editable,
        dataset: { path: `note:${f.name}`, field: f.name },
        onchange: (e) => saveNote(r, f, e.target.value.trim()),
        onkeydown: (e) => {
          if (e.key === "Enter") {
            e.preventDefault();
            e.target.blur();
          }
        },
      });
      return el(
        "tr",
        { class: [disputed.has(f.name) ? "disputed" : "", isOpen ? "open" : ""].join(" ").trim(), dataset: { field: f.name } },
        el("th", { scope: "row", class: "f" }, f.title, disputed.has(f.name) ? el("span", { class: `chip ${isOpen ? "chip-open" : "chip-decided"}`, text: isOpen ? "open" : "decided" }) : null),
        ...sources.map(([id, , content]) => {
          const value = fieldValue(content, f);
          const inGold = sameField(f, value, goldValue);
          // Green marks the value the gold holds, only where there was a choice to make.
          const chosen = inGold && disputed.has(f.name) && !isOpen;
          const outvoted = id !== "draft" && (r.outliers[f.name] || []).includes(id);
          // A take is offered where it decides something: on an open field, or where the value differs from the gold.
          const offer = editable && (isOpen || !inGold);
          return el(
            "td",
            { class: ["src", id === "draft" ? "draft" : "", chosen ? "chosen" : "", outvoted ? "outvoted" : ""].join(" ").trim(), dataset: { source: id } },
            el("div", { class: "val" }, shown(f, value, r)),
            offer
              ? el("button", { type: "button", class: "take", title: `Use ${id === "draft" ? "the LLM draft" : id}'s value as the gold`, dataset: { field: f.name, source: id }, onclick: () => take(r, f, id), text: "take" })
              : null
          );
        }),
        el("td", { class: "gold" }, el("div", { class: "val" }, shown(f, goldValue, r)), d ? el("div", { class: "decision", text: decisionText(d) }) : null, noteInput)
      );
    });
    box.append(el("div", { class: "compare-wrap" }, el("table", { class: "compare-table" }, el("thead", {}, head), el("tbody", {}, ...body))));
    return box;
  }

  // ---------------------------------------------------------------- hooks
  window.RowEditorHooks = {
    setup(api) {
      ed = api;
      wireFilters();
      showCount();
    },
    rowVisible,
    statusText(r, status) {
      if (status === "unsaved") return status;
      const left = undecided(r).length;
      if (left) return `${left} open`;
      if (r.gold.version > 0) return "decided";
      return r.unanimous ? "agreed" : "no gold";
    },
    rowMarkers(r) {
      if (!r.disputed.length) return null;
      const titles = r.disputed.map((name) => FIELDS.find((f) => f.name === name).title);
      return ed.el("span", { class: "marker dispute", title: `coders disagree on: ${titles.join(", ")}`, text: `≠${r.disputed.length}` });
    },
    progressText(rows) {
      const done = rows.filter(adjudicated).length;
      const left = rows.reduce((n, r) => n + undecided(r).length, 0);
      return `${done} / ${rows.length} rows adjudicated · ${left} open decision${left === 1 ? "" : "s"}`;
    },
    fieldClass(r, keys) {
      const f = FIELDS.find((x) => x.keys.some((k) => keys.includes(k)));
      if (!f || !r.disputed.includes(f.name)) return "";
      return undecided(r).includes(f.name) ? "disputed open" : "disputed";
    },
    beforeSections(r) {
      return compareTable(r);
    },
    saveBody(r, body) {
      // A note travels with a save only where the save decides something (the
      // field changed) or the field is already decided; on an open field it
      // waits for the take, so that typing a note never decides silently.
      const notes = pendingNotes[r.row_id] || {};
      const send = {};
      for (const f of FIELDS) {
        if (!(f.name in notes)) continue;
        if (decisions(r)[f.name] || !sameField(f, fieldValue(body.content, f), fieldValue(r.gold.content, f))) send[f.name] = notes[f.name];
      }
      if (Object.keys(send).length) body.notes = send;
      sentNotes = Object.keys(send);
    },
    afterSave(r) {
      for (const name of sentNotes) delete (pendingNotes[r.row_id] || {})[name];
      sentNotes = [];
      showCount();
    },
  };
})();
