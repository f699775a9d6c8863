/* The guide page's search: every word typed must appear in an item (a label with its
 * definition, rules and guidance, or a boundary rule); the others are hidden, and so is a
 * field or scenario with nothing left. "/" goes to the search box, Esc clears it. The
 * address's #anchor (a label the editor sent the reader to) is brought into view and marked. */
const box = document.getElementById("guide-q");
const count = document.getElementById("guide-count");
const nothing = document.getElementById("guide-nothing");
const items = [...document.querySelectorAll("[data-guide-item]")];
const groups = [...document.querySelectorAll("[data-guide-group]")].reverse(); // innermost first
// A label whose guidance is written out under another label still matches that guidance's words (data-search).
const text = new Map(items.map((el) => [el, [el.textContent, ...[...el.querySelectorAll("[data-search]")].map((x) => x.dataset.search)].join(" ").toLowerCase().replace(/\s+/g, " ")]));

function filter() {
  const words = box.value.toLowerCase().split(/\s+/).filter(Boolean);
  let shown = 0;
  for (const el of items) {
    const hit = words.every((w) => text.get(el).includes(w));
    el.hidden = !hit;
    shown += hit;
  }
  for (const group of groups) group.hidden = !group.querySelector("[data-guide-item]:not([hidden])");
  count.textContent = words.length ? `${shown} of ${items.length} match` : "";
  nothing.hidden = shown > 0;
  const url = new URL(location.href);
  if (box.value) url.searchParams.set("q", box.value);
  else url.searchParams.delete("q");
  history.replaceState(null, "", url);
}

function markAnchor() {
  document.querySelectorAll(".guide-item.target").forEach((el) => el.classList.remove("target"));
  const id = decodeURIComponent(location.hash.slice(1));
  const el = id && document.getElementById(id);
  if (!el) return;
  if (el.hidden) {
    box.value = "";
    filter();
  }
  el.classList.add("target");
  el.scrollIntoView({ block: "center" });
}

box.addEventListener("input", filter);
box.addEventListener("keydown", (e) => {
  if (e.key === "Escape") {
    box.value = "";
    filter();
  }
});
document.addEventListener("keydown", (e) => {
  if (e.key === "/" && document.activeElement !== box && !e.ctrlKey && !e.metaKey && !e.altKey) {
    e.preventDefault();
    box.focus();
    box.select();
  }
});
window.addEventListener("hashchange", markAnchor);
if (box.value) filter();
markAnchor();
