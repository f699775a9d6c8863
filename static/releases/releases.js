// Releases page: poll each queued or running freeze job and show its progress;
// reload once a job has finished, so the new release appears in the list.
(function () {
  "use strict";
  var rows = Array.prototype.slice.call(document.querySelectorAll("tr.release-job"));
  var active = rows.filter(function (row) {
    var state = row.getAttribute("data-state");
    return state === "queued" || state === "running";
  });
  if (!active.length) { return; }
  function poll(row) {
    var url = row.getAttribute("data-status-url");
    fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) { return response.json(); })
      .then(function (job) {
        var bar = row.querySelector("progress");
        if (bar) {
          bar.max = Math.max(job.progress_total, 1);
          bar.value = job.progress_done;
        }
        var state = row.querySelector(".job-state .state");
        if (state) { state.textContent = job.state; }
        if (job.state === "succeeded" || job.state === "failed") {
          window.location.reload();
          return;
        }
        window.setTimeout(function () { poll(row); }, 1000);
      })
      .catch(function () { window.setTimeout(function () { poll(row); }, 5000); });
  }
  active.forEach(function (row) { window.setTimeout(function () { poll(row); }, 500); });
})();

// Freeze preview: the Freeze button opens a dialog that states what will happen
// (counts) and holds the real submit button; Cancel (or Escape) closes it.
(function () {
  "use strict";
  Array.prototype.forEach.call(document.querySelectorAll("button[data-dialog]"), function (button) {
    var dialog = document.getElementById(button.getAttribute("data-dialog"));
    if (!dialog || typeof dialog.showModal !== "function") { return; }
    button.addEventListener("click", function () { dialog.showModal(); });
  });
  Array.prototype.forEach.call(document.querySelectorAll("button[data-close]"), function (button) {
    button.addEventListener("click", function () {
      var dialog = document.getElementById(button.getAttribute("data-close"));
      if (dialog) { dialog.close(); }
    });
  });
})();
