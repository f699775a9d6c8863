// The judging page: S / D / C press the matching button (the form posts, the next pair comes back).
// Keys are ignored while typing in a field or with a modifier held.
(function () {
  "use strict";
  var form = document.getElementById("judge-form");
  if (!form) return;
  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || event.repeat) return;
    var target = event.target;
    if (target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName))) return;
    var button = form.querySelector('button[data-key="' + event.key.toLowerCase() + '"]');
    if (!button || button.disabled) return;
    event.preventDefault();
    button.classList.add("pressed");
    button.click();
  });
  form.addEventListener("submit", function () {
    // One judgement per pair: a second press while the first is on its way does nothing.
    window.setTimeout(function () {
      Array.prototype.forEach.call(form.querySelectorAll("button"), function (b) { b.disabled = true; });
    }, 0);
  });
})();
