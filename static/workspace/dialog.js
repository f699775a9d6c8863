/* Asking before an irreversible step (submitting a clip, accepting unanimous rows,
 * marking a clip adjudicated, discarding it): a modal <dialog> that says what will
 * happen, with counts. The safe choice has the focus, so a stray Enter cancels. */
import { render } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { html } from "./lib.js";

let host = null;

function ConfirmDialog({ title, lines, confirmLabel, reason, onDone }) {
  const ref = useRef(null);
  const [text, setText] = useState("");
  useEffect(() => {
    ref.current.showModal();
    // Asked for a reason, the person starts typing it; otherwise the safe choice has the focus.
    ref.current.querySelector(reason ? "#confirm-reason" : "#confirm-no").focus();
  }, []);
  const cancel = (e) => {
    e.preventDefault();
    onDone(false);
  };
  const given = text.trim();
  return html`<dialog ref=${ref} class="confirm-dialog" id="confirm-dialog" aria-labelledby="confirm-title" onCancel=${cancel}>
    <h2 id="confirm-title">${title}</h2>
    ${lines.map((line, i) => html`<p key=${i}>${line}</p>`)}
    ${reason
      ? html`<label class="block" for="confirm-reason">${reason.label}</label>
          <textarea id="confirm-reason" rows="2" placeholder=${reason.placeholder || ""} value=${text} onInput=${(e) => setText(e.currentTarget.value)}></textarea>`
      : null}
    <div class="dialog-actions">
      <button type="button" class="primary" id="confirm-yes" disabled=${reason && !given} title=${reason && !given ? "Give the reason first" : ""}
        onClick=${() => onDone(reason ? given : true)}>${confirmLabel}</button>
      <button type="button" id="confirm-no" onClick=${() => onDone(false)}>Cancel</button>
    </div>
  </dialog>`;
}

/** Resolve to true when the person confirms (false when not). `lines`: sentences saying what will happen.
 * With `reason` ({label, placeholder}) the dialog asks for a reason, and resolves to its text (never empty). */
export function confirmStep({ title, lines, confirmLabel = "Confirm", reason = null }) {
  if (!host) {
    host = document.createElement("div");
    host.id = "confirm-host";
    document.body.append(host);
  }
  const previous = document.activeElement;
  return new Promise((resolve) => {
    const done = (ok) => {
      render(null, host);
      if (previous && previous.focus) previous.focus();
      resolve(ok);
    };
    render(html`<${ConfirmDialog} title=${title} lines=${lines} confirmLabel=${confirmLabel} reason=${reason} onDone=${done} />`, host);
  });
}

/** Server-rendered forms marked data-confirm-title / data-confirm-lines ("|"-separated) ask first. */
export function confirmForms(root = document) {
  root.querySelectorAll("form[data-confirm-title]").forEach((form) => {
    form.addEventListener("submit", async (e) => {
      if (form.dataset.confirmed === "1") return;
      e.preventDefault();
      const ok = await confirmStep({
        title: form.dataset.confirmTitle,
        lines: (form.dataset.confirmLines || "").split("|").filter(Boolean),
        confirmLabel: form.dataset.confirmLabel || "Confirm",
      });
      if (ok) {
        form.dataset.confirmed = "1";
        form.requestSubmit();
      }
    });
  });
}
