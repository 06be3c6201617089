// hookstream console: the little the pages need beyond HTML. Served from the binary; the CSP
// allows no inline script, so everything is wired here by element ids and data attributes.
"use strict";

document.addEventListener("DOMContentLoaded", function () {
  // Forms that change something important ask first.
  document.querySelectorAll("form.confirm").forEach(function (form) {
    form.addEventListener("submit", function (ev) {
      if (!window.confirm(form.dataset.confirm || "Are you sure?")) {
        ev.preventDefault();
      }
    });
  });

  // The endpoint form shows the fields of the chosen kind of authentication only (without
  // JavaScript all are shown, and the console sends the chosen kind's fields only).
  var authType = document.getElementById("auth-type");
  if (authType) {
    var showKind = function () {
      document.querySelectorAll(".auth-kind").forEach(function (el) {
        el.classList.toggle("hidden", el.dataset.kind !== authType.value);
      });
    };
    authType.addEventListener("change", showKind);
    showKind();
  }

  // A replay job's live progress: poll its progress until it has finished.
  var job = document.getElementById("job");
  if (job && job.dataset.finished !== "true") {
    var poll = function () {
      fetch(job.dataset.progress, { credentials: "same-origin", headers: { Accept: "application/json" } })
        .then(function (res) { return res.ok ? res.json() : Promise.reject(res.status); })
        .then(function (p) {
          document.getElementById("job-state").textContent = p.state;
          document.getElementById("job-state").className = "badge " + p.state;
          document.getElementById("job-done").textContent = p.done;
          document.getElementById("job-failed").textContent = p.failed;
          document.getElementById("job-total").textContent = p.total;
          var bar = document.getElementById("job-progress");
          bar.max = p.total > 0 ? p.total : 1;
          bar.value = p.done;
          document.getElementById("job-error").textContent = p.error || "";
          if (p.state === "succeeded" || p.state === "failed") {
            window.location.reload(); // the finished job's page, with its end time
            return;
          }
          window.setTimeout(poll, 1000);
        })
        .catch(function () { window.setTimeout(poll, 3000); });
    };
    window.setTimeout(poll, 500);
  }

  // A delivery waiting for an attempt (a test event, a replay): reload once it is recorded.
  var wait = document.getElementById("await");
  if (wait) {
    var want = parseInt(wait.dataset.await, 10);
    var check = function () {
      fetch(wait.dataset.status, { credentials: "same-origin", headers: { Accept: "application/json" } })
        .then(function (res) { return res.ok ? res.json() : Promise.reject(res.status); })
        .then(function (s) {
          if (s.found && s.attempts >= want) {
            var url = new URL(window.location.href);
            url.searchParams.delete("await");
            window.location.replace(url.toString());
            return;
          }
          window.setTimeout(check, 500);
        })
        .catch(function () { window.setTimeout(check, 2000); });
    };
    window.setTimeout(check, 500);
  }
});
