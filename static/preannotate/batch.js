// Keeps the pre-annotation batch page current while a batch runs: polls the
// batch status endpoint, updates the progress bar and each clip's job state,
// and reloads the page once the batch has finished (to show retry buttons).
(function () {
  "use strict";
  var section = document.getElementById("batch");
  if (!section || section.dataset.finished === "true") { return; }
  var url = section.dataset.statusUrl;
  var bar = section.querySelector("progress");
  var summary = section.querySelector('[data-field="summary"]');
  var state = section.querySelector('[data-field="state"]');

  function update(status) {
    bar.max = Math.max(status.total, 1);
    bar.value = status.done;
    summary.textContent = status.done + " of " + status.total + " clips finished · " + status.succeeded +
      " pre-annotated · " + status.failed + " failed · " + status.running + " running · " + status.queued + " queued";
    state.textContent = status.state;
    status.clips.forEach(function (c) {
      var row = document.querySelector('tr[data-clip="' + c.clip + '"]');
      if (!row) { return; }
      var jobState = row.querySelector('[data-field="job_state"]');
      if (jobState) { jobState.textContent = c.state; }
    });
    if (status.finished) { window.location.reload(); }
  }

  function poll() {
    fetch(url, { credentials: "same-origin", headers: { "Accept": "application/json" } })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (status) {
        if (status) { update(status); }
        if (!status || !status.finished) { window.setTimeout(poll, 2000); }
      })
      .catch(function () { window.setTimeout(poll, 5000); });
  }
  window.setTimeout(poll, 1000);
})();
