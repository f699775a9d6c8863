/* Asking before an irreversible step (submitting a clip, accepting unanimous rows,
 * marking a clip adjudicated, discarding it): a modal <dialog> that says what will
 * happen, with counts. The safe choice has the focus, so a stray Enter cancels. */
import { render } from "preact";
import { useEffect, useRef } from "preact/hooks";
import { html } from "./lib.js";

let host = null;

function ConfirmDialog({ title, lines, confirmLabel, onDone }) {
  const ref = useRef(null);
  useEffect(() => {
    ref.current.showModal();
    ref.current.querySelector("#confirm-no").focus();
  }, []);
  const cancel = (e) => {
    e.preventDefault();
    onDone(false);
  };
  return html`<dialog ref=${ref} class="confirm-dialog" id="confirm-dialog" aria-labelledby="confirm-title" onCancel=${cancel}>
    <h2 id="confirm-title">${title}</h2>
    ${lines.map((line, i) => html`<p key=${i}>${line}</p>`)}
    <div class="dialog-actions">
      <button type="button" class="primary" id="confirm-yes" onClick=${() => onDone(true)}>${confirmLabel}</button>
      <button type="button" id="confirm-no" onClick=${() => onDone(false)}>Cancel</button>
    </div>
  </dialog>`;
}

/** Resolve to true when the person confirms. `lines`: sentences saying what will happen. */
export function confirmStep({ title, lines, confirmLabel = "Confirm" }) {
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
    render(html`<${ConfirmDialog} title=${title} lines=${lines} confirmLabel=${confirmLabel} onDone=${done} />`, host);
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
