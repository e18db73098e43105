// The owner's console in the admin. On a pending request's page: "a" approves and "r" rejects,
// each after a confirmation; the submit buttons ask the same when clicked.
(function () {
  "use strict";
  function confirmed(button) {
    var question = button.getAttribute("data-confirm");
    return !question || window.confirm(question);
  }
  document.addEventListener("DOMContentLoaded", function () {
    var panel = document.getElementById("decide-at-a-glance");
    if (!panel || panel.getAttribute("data-pending") !== "1") return;
    var approve = panel.querySelector("input[name=_approve]");
    var reject = panel.querySelector("input[name=_reject]");
    var reason = document.getElementById("reason");
    [approve, reject].forEach(function (button) {
      if (!button) return;
      button.addEventListener("click", function (event) {
        if (!button.form.checkValidity()) return;  // the browser says what is missing
        if (!confirmed(button)) event.preventDefault();
      });
    });
    document.addEventListener("keydown", function (event) {
      if (event.ctrlKey || event.metaKey || event.altKey) return;
      var target = event.target;
      if (target && (target.isContentEditable || /^(input|textarea|select)$/i.test(target.tagName))) return;
      if (event.key === "a" && approve) {
        event.preventDefault();
        if (confirmed(approve)) approve.form.submit();
      } else if (event.key === "r" && reject) {
        event.preventDefault();
        if (!reason.value.trim()) { reason.focus(); return; }  // a rejection needs its reason first
        if (confirmed(reject)) reject.form.submit();
      }
    });
  });
})();
