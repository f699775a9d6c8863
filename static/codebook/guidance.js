/* The lead's guidance form: only the chosen field's labels, and only those the chosen
 * scenario has; when the ticked labels already have guidance, its text comes into the
 * box (unless the lead has typed there) and a note says the save rewrites it. The
 * server checks everything again (annotation/codebook/services.py). */
const form = document.getElementById("guidance-form");
const field = document.getElementById("guidance-field");
const scenario = document.getElementById("guidance-scenario");
const text = document.getElementById("guidance-text");
const note = document.getElementById("guidance-existing");
const entries = JSON.parse(document.getElementById("guidance-entries-data").textContent);
let typed = false;

const sets = () => [...form.querySelectorAll("fieldset.label-checks")];
const ticked = () => [...form.querySelectorAll(`fieldset[data-field="${field.value}"] input:checked`)].map((x) => x.value);

function showLabels() {
  const where = scenario.value || "all";
  for (const set of sets()) {
    const on = set.dataset.field === field.value;
    set.hidden = !on;
    for (const label of set.querySelectorAll("label")) {
      const input = label.querySelector("input");
      const available = on && label.dataset.where.split(" ").includes(where);
      label.classList.toggle("unavailable", !available);
      input.disabled = !available;
      if (!available) input.checked = false;
    }
  }
}

function showExisting() {
  const labels = ticked();
  const entry = entries.find(
    (e) => e.field === field.value && e.scenario === scenario.value && e.labels.length === labels.length && e.labels.every((x) => labels.includes(x))
  );
  note.hidden = !entry;
  note.textContent = entry ? `This rewrites the guidance for ${entry.title} written by ${entry.written_by} (version ${entry.version}).` : "";
  if (!typed) text.value = entry ? entry.text : "";
}

text.addEventListener("input", () => (typed = text.value.trim() !== ""));
field.addEventListener("change", () => (showLabels(), showExisting()));
scenario.addEventListener("change", () => (showLabels(), showExisting()));
form.addEventListener("change", (e) => {
  if (e.target.type === "checkbox") showExisting();
});
typed = text.value.trim() !== "" && !entries.some((e) => e.text === text.value);
showLabels();
