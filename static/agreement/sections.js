// The agreement page's full tables are folded by section: a link to a section (from the summary at the top,
// or an address ending in #section-...) opens it and brings it into view.
(function () {
  function openSection(id) {
    const el = id && document.getElementById(id);
    const details = el && (el.tagName === "DETAILS" ? el : el.closest("details"));
    if (!details) return false;
    details.open = true;
    details.scrollIntoView({ block: "start" });
    return true;
  }
  document.addEventListener("click", function (e) {
    const a = e.target.closest && e.target.closest("a[href^='#']");
    if (a && openSection(a.getAttribute("href").slice(1))) {
      e.preventDefault();
      history.replaceState(null, "", a.getAttribute("href"));
    }
  });
  window.addEventListener("DOMContentLoaded", function () {
    if (location.hash) openSection(location.hash.slice(1));
  });
})();
