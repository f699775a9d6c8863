/* The editor's controls. Every input is controlled (its value comes from the
 * working document, each keystroke updates the document) and keyed, so a
 * re-render patches it in place: nothing under the pointer or the focus is
 * ever replaced while someone types or clicks. */
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from "preact/hooks";
import { THERAPIST, cls, focusFieldAfter, html, keyOf } from "./lib.js";

/** A labelled field with its messages. `issues`: [{message}] placed at this field. */
export function Field({ label, path, issues, className, badges, hint, children, inline, quiet }) {
  const errors = issues || [];
  return html`<div class=${cls("field", inline && "inline", quiet && "quiet", errors.length && "has-error", className)} data-path=${path}>
    <div class="field-label">${label}${badges}</div>
    <div class="field-control">${children}</div>
    ${hint && !errors.length ? html`<p class="hint">${hint}</p>` : null}
    ${errors.map((e, i) => html`<p class="field-error" role="alert" key=${i}>${e}</p>`)}
  </div>`;
}

export function EntitySelect({ value, path, entities, exclude, onChange, disabled, label }) {
  const names = entities.filter((n) => !(exclude || []).includes(n) || n === value);
  return html`<select data-path=${path} aria-label=${label} disabled=${disabled} value=${value || ""} onChange=${(e) => onChange(e.currentTarget.value)}>
    <option value="">— ${label || "choose"} —</option>
    ${names.map((n) => html`<option key=${n} value=${n}>${n}</option>`)}
  </select>`;
}

export function EntityChecks({ values, path, entities, owner, noTherapist, groupAlone, groupLabel, onChange, disabled }) {
  const chosen = values || [];
  const toggle = (name, on) => {
    let next = chosen.filter((v) => v !== name);
    if (on) {
      next = [...next, name];
      // The group label stands alone in a strategy target.
      if (groupAlone) next = name === groupLabel ? [name] : next.filter((v) => v !== groupLabel);
    }
    onChange(entities.filter((n) => next.includes(n)));
  };
  return html`<div class="checks" data-path=${path}>
    ${entities
      .filter((n) => n !== owner && !(noTherapist && n === THERAPIST))
      .map(
        (name) => html`<label class="check" key=${name}>
          <input type="checkbox" checked=${chosen.includes(name)} disabled=${disabled} onChange=${(e) => toggle(name, e.currentTarget.checked)} />${name}
        </label>`
      )}
  </div>`;
}

export function TextField({ value, path, onInput, multiline, disabled, placeholder, label }) {
  const props = {
    "data-path": path,
    value: value || "",
    disabled,
    placeholder,
    "aria-label": label,
    onInput: (e) => onInput(e.currentTarget.value),
  };
  return multiline ? html`<textarea rows="2" ...${props} />` : html`<input type="text" ...${props} />`;
}

/** 0–10 as one row of choices: one click, arrow keys move along; nothing chosen is allowed (a new entry). */
export function Intensity({ value, path, onChange, disabled }) {
  const name = `i-${path}`;
  return html`<div class="intensity" role="radiogroup" aria-label="intensity 0 to 10" data-path=${path}>
    ${Array.from({ length: 11 }, (_, n) => html`<label key=${n} class=${cls("seg", value === n && "on")}>
      <input type="radio" name=${name} value=${n} checked=${value === n} disabled=${disabled} onChange=${() => onChange(n)} /><span>${n}</span>
    </label>`)}
  </div>`;
}

/** Does a rule or a guidance entry speak about `label` of `field`? ("" is a label here: the
 * empty choice, "no clear pattern"; null, "not annotated", is not.) */
const about = (field, label) => (x) => !!field && label !== null && label !== undefined && x.field === field && x.labels.includes(label);

/** The boundary rules of the chosen or the highlighted label: the project's own guidance
 * (marked as the project's, with who wrote it and its version), then the taxonomy's rules. */
function Rules({ rules, guidance, field, label, className }) {
  const own = ((guidance && guidance.entries) || []).filter(about(field, label));
  const shown = rules.filter(about(field, label));
  if (!shown.length && !own.length) return null;
  return html`<div class=${cls("rules", className)} aria-live="polite">
    ${own.map(
      (g) => html`<div class="rule guidance" key=${g.id} data-guidance=${g.id}>
        <b><span class="guidance-mark">Project guidance</span> ${g.title}</b><p>${g.text}</p>
        <p class="guidance-by">${g.written_by}, ${new Date(g.written_at).toLocaleDateString()} · guidance version ${g.version}</p>
      </div>`
    )}
    ${shown.map((r) => html`<div class="rule" key=${r.id}><b>${r.title}</b><p>${r.text}</p></div>`)}
  </div>`;
}

/** A label picker: the chosen label with its definition; opening it lists every label
 * with its definition, filters as you type, and shows the boundary rules of the
 * highlighted label. After a choice the focus moves on to the next field. */
export function LabelPicker({ fieldName, options, rules, guidance, value, path, onChange, nullOption, blankOption, disabled }) {
  const choices = useMemo(() => {
    const out = [];
    if (nullOption) out.push({ label: null, title: nullOption, definition: "" });
    if (blankOption) out.push({ label: "", title: blankOption, definition: "" });
    for (const o of options) out.push({ label: o.label, title: o.label, definition: o.definition });
    return out;
  }, [options, nullOption, blankOption]);
  const [open, setOpen] = useState(false);
  const [query, setQuery] = useState("");
  const [active, setActive] = useState(0);
  const buttonRef = useRef(null);
  const filterRef = useRef(null);
  const popRef = useRef(null);
  const q = query.trim().toLowerCase();
  const visible = choices.filter((c) => !q || c.title.toLowerCase().includes(q) || (c.definition || "").toLowerCase().includes(q));
  const current = choices.find((c) => c.label === value);
  const activeChoice = visible[Math.min(active, Math.max(visible.length - 1, 0))];
  const guided = new Set(((guidance && guidance.entries) || []).filter((g) => g.field === fieldName).flatMap((g) => g.labels));

  // In the same task as the render that opened the list, so that the very next key lands in the filter.
  useLayoutEffect(() => {
    if (!open) return;
    filterRef.current.focus();
    popRef.current.scrollIntoView({ block: "nearest" });
  }, [open]);

  const toggle = () => {
    if (open) return setOpen(false);
    setQuery("");
    setActive(Math.max(0, choices.findIndex((c) => c.label === value)));
    setOpen(true);
  };
  const choose = (c) => {
    setOpen(false);
    onChange(c.label);
    // After the editor has drawn the choice, go on to the next field.
    const button = buttonRef.current;
    queueMicrotask(() => focusFieldAfter(button, button && button.closest("#editor")));  // after the render microtask, before the next key
  };
  const onKey = (e) => {
    if (e.key === "ArrowDown") setActive(Math.min(active + 1, visible.length - 1));
    else if (e.key === "ArrowUp") setActive(Math.max(active - 1, 0));
    else if (e.key === "Enter") {
      if (activeChoice) choose(activeChoice);
    } else if (e.key === "Escape") {
      e.stopPropagation();
      setOpen(false);
      buttonRef.current.focus();
    } else return;
    e.preventDefault();
  };
  return html`<div class="picker">
    <button type="button" ref=${buttonRef} class="picker-button" data-path=${path} data-picker=${fieldName || path} data-value=${value === null || value === undefined ? "null" : value} disabled=${disabled} aria-haspopup="listbox" aria-expanded=${open} onClick=${toggle}>
      <span class="picker-value">${current ? current.title : value ? String(value) : "— choose —"}</span>
      ${current && current.definition ? html`<span class="picker-def">${current.definition}</span>` : null}
    </button>
    ${open
      ? html`<div class="picker-pop" ref=${popRef}>
          <input type="text" class="picker-filter" ref=${filterRef} placeholder="type to filter…" aria-label="filter labels" value=${query}
            onInput=${(e) => {
              setQuery(e.currentTarget.value);
              setActive(0);
            }}
            onKeyDown=${onKey} onBlur=${() => setTimeout(() => setOpen(false), 150)} />
          <ul class="picker-list" role="listbox">
            ${visible.map(
              (c, i) => html`<li key=${c.label === null ? "\u0000null" : c.label} role="option" class=${i === active ? "active" : ""} aria-selected=${c.label === value ? "true" : "false"}
                onMouseEnter=${() => setActive(i)} onMouseDown=${(e) => {
                  e.preventDefault();
                  choose(c);
                }}>
                <b>${c.title}${c.label !== null && guided.has(c.label) ? html` <i class="guided" title="the project has guidance on this label">project guidance</i>` : null}</b>${c.definition ? html`<span>${c.definition}</span>` : null}
              </li>`
            )}
          </ul>
          <${Rules} rules=${rules} guidance=${guidance} field=${fieldName} label=${activeChoice && activeChoice.label} className="in-pop" />
        </div>`
      : null}
    ${open ? null : html`<${Rules} rules=${rules} guidance=${guidance} field=${fieldName} label=${value} />`}
  </div>`;
}

/** A list of entries, each with its tools (move, remove), and an "add" button.
 * A new entry starts empty: nothing is chosen or written for the annotator. */
export function ListField({ fieldKey, title, items, blank, renderItem, onEdit, readOnly }) {
  const [focusNew, setFocusNew] = useState(null);
  const boxRef = useRef(null);
  useEffect(() => {
    if (focusNew === null || !boxRef.current) return;
    const entry = boxRef.current.querySelector(`.entry[data-path="${fieldKey}[${focusNew}]"]`);
    const first = entry && entry.querySelector("select:not([disabled]), input:not([disabled]), textarea:not([disabled]), button.picker-button");
    if (first) first.focus();
    setFocusNew(null);
  }, [focusNew]);
  const move = (i, delta) =>
    onEdit((w) => {
      const [x] = w[fieldKey].splice(i, 1);
      w[fieldKey].splice(i + delta, 0, x);
    });
  const add = () => {
    onEdit((w) => (w[fieldKey] = [...(w[fieldKey] || []), blank()]));
    setFocusNew(items.length);
  };
  return html`<div class="list-field" ref=${boxRef}>
    ${items.map(
      (item, i) => html`<div class="entry" key=${keyOf(item)} data-path=${`${fieldKey}[${i}]`}>
        <div class="entry-body">${renderItem(item, i, `${fieldKey}[${i}]`)}</div>
        ${readOnly
          ? null
          : html`<div class="entry-tools">
              <button type="button" class="icon" title="move up" disabled=${i === 0} onClick=${() => move(i, -1)}>↑</button>
              <button type="button" class="icon" title="move down" disabled=${i === items.length - 1} onClick=${() => move(i, 1)}>↓</button>
              <button type="button" class="icon danger" title="remove" onClick=${() => onEdit((w) => w[fieldKey].splice(i, 1))}>✕</button>
            </div>`}
      </div>`
    )}
    ${readOnly ? (items.length ? null : html`<span class="none">none</span>`) : html`<button type="button" class="add" onClick=${add}>+ add ${title}</button>`}
  </div>`;
}
