// Dates and times come from the server in UTC, inside <time datetime="..." data-local-time="datetime|seconds|date">
// (annotation/templatetags/people.py: local_time). The server knows neither the reader's locale nor their
// time zone; the browser knows both, so each one is rewritten here with Intl.DateTimeFormat. The exact UTC
// instant stays in the element's title.
(function () {
  "use strict";
  var styles = {
    datetime: new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" }),
    seconds: new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" }),
    date: new Intl.DateTimeFormat(undefined, { dateStyle: "medium" }),
  };

  function localise(root) {
    root.querySelectorAll("time[data-local-time]").forEach(function (el) {
      var when = new Date(el.getAttribute("datetime"));
      var format = styles[el.dataset.localTime] || styles.datetime;
      if (!isNaN(when.getTime())) { el.textContent = format.format(when); }
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", function () { localise(document); });
  } else {
    localise(document);
  }
})();
