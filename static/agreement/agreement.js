// Agreement dashboard: while a report (the label figures, the free-text figures)
// is computed on a worker, poll its status and show progress; reload the page
// once it is ready (or failed).
(function () {
  "use strict";
  var boxes = document.querySelectorAll("[data-status-url]");
  Array.prototype.forEach.call(boxes, function (box) {
    var url = box.getAttribute("data-status-url");
    var bar = box.querySelector("progress");
    function poll() {
      fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
        .then(function (response) { return response.json(); })
        .then(function (body) {
          if (body.status === "ready" || body.status === "failed" || body.status === "missing") {
            window.location.reload();
            return;
          }
          if (body.job && bar) {
            bar.max = Math.max(body.job.progress_total, 1);
            bar.value = body.job.progress_done;
          }
          window.setTimeout(poll, 1500);
        })
        .catch(function () { window.setTimeout(poll, 5000); });
    }
    window.setTimeout(poll, 1000);
  });
})();
