// Assign page: filter the clip table (sample id, state, how many annotators a clip has, whom it is assigned to: the
// record dashboard links here with ?coder=<username> to reassign that coder's clips) and tick every clip the
// filter shows at once. The checkboxes belong to the assign form (form="assign-form"); rows hidden by the filter
// keep their ticks, and the counts under the table say how many are ticked in all.
document.addEventListener("DOMContentLoaded", () => {
  const table = document.getElementById("assignment-clips");
  const form = document.getElementById("assign-form");
  if (!table || !form) return;
  const text = document.getElementById("filter-text");
  const state = document.getElementById("filter-state");
  const assigned = document.getElementById("filter-assigned");
  const coder = document.getElementById("filter-coder");
  const perClip = document.getElementById("id_per_clip");
  const selectAll = document.getElementById("select-all-shown");
  const shownCount = document.getElementById("filter-count");
  const rows = Array.from(table.querySelectorAll("tbody tr[data-sample-id]"));
  const box = (row, name) => row.querySelector(`input[name="${name}"]`);

  const matches = (row) => {
    const needle = text.value.trim().toLowerCase();
    if (needle && !row.dataset.sampleId.toLowerCase().includes(needle)) return false;
    if (state.value && row.dataset.state !== state.value) return false;
    const have = Number(row.dataset.assigned);
    const want = Number(perClip.value) || 1;
    if (assigned.value === "none" && have !== 0) return false;
    if (assigned.value === "missing" && have >= want) return false;
    if (assigned.value === "full" && have < want) return false;
    if (coder.value && !row.dataset.coders.split(" ").includes(coder.value)) return false;
    return true;
  };
  const shown = () => rows.filter((row) => !row.hidden);
  const tickable = () => shown().map((row) => box(row, "clips")).filter(Boolean);

  const count = () => {
    const ticked = rows.filter((row) => box(row, "clips")?.checked).length;
    const calibration = rows.filter((row) => box(row, "calibration_clips")?.checked).length;
    document.getElementById("ticked-count").textContent = ticked;
    document.getElementById("calibration-count").textContent = calibration;
    const boxes = tickable();
    const on = boxes.filter((b) => b.checked).length;
    selectAll.checked = boxes.length > 0 && on === boxes.length;
    selectAll.indeterminate = on > 0 && on < boxes.length;
    selectAll.disabled = boxes.length === 0;
  };

  const filter = () => {
    rows.forEach((row) => { row.hidden = !matches(row); });
    const n = shown().length;
    shownCount.textContent = n === rows.length ? `${n} clips` : `${n} of ${rows.length} clips shown`;
    count();
  };

  selectAll.addEventListener("change", () => {
    tickable().forEach((b) => { b.checked = selectAll.checked; });
    if (!selectAll.checked) {
      shown().forEach((row) => { const c = box(row, "calibration_clips"); if (c) c.checked = false; });
    }
    count();
  });
  table.addEventListener("change", (event) => {
    const input = event.target;
    const row = input.closest("tr[data-sample-id]");
    if (!row) return;
    // A calibration clip is assigned too; a clip taken out of the assignment is no calibration clip either.
    if (input.name === "calibration_clips" && input.checked) box(row, "clips").checked = true;
    if (input.name === "clips" && !input.checked) { const c = box(row, "calibration_clips"); if (c) c.checked = false; }
    count();
  });
  [text, state, assigned, coder, perClip].forEach((el) => el.addEventListener("input", filter));
  filter();
});
