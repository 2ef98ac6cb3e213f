(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("assay-data").textContent);
  var cases = Array.prototype.slice.call(document.querySelectorAll("section.case"));
  var q = document.getElementById("q");
  var outcome = document.getElementById("outcome");
  var suite = document.getElementById("suite");
  var shown = document.getElementById("shown");
  var current = null;

  function matches(c) {
    var o = outcome.value, s = suite.value, t = q.value.trim().toLowerCase();
    if (o === "changed") {
      if (c.getAttribute("data-changed") !== "yes") return false;
    } else if (o && c.getAttribute("data-outcome") !== o) return false;
    if (s && c.getAttribute("data-suite") !== s) return false;
    return !t || text(c).indexOf(t) >= 0;
  }

  // What the search looks in: the case-run's text, not the reviewer's form.
  function text(c) {
    return Array.prototype.map.call(c.children, function (ch) {
      return ch.matches("fieldset.review") ? "" : ch.textContent;
    }).join(" ").toLowerCase();
  }

  function apply() {
    var n = 0;
    cases.forEach(function (c) {
      var ok = matches(c);
      c.hidden = !ok;
      if (ok) n += 1;
    });
    shown.textContent = n + " of " + cases.length + " case-runs shown";
    // A matrix row and a case's group show while any of their case-runs does.
    Array.prototype.forEach.call(document.querySelectorAll("[data-runs]"), function (el) {
      el.hidden = !el.getAttribute("data-runs").split(" ").some(function (i) {
        var c = document.getElementById("c" + i);
        return c && !c.hidden;
      });
    });
  }

  function select(el, v) {
    for (var i = 0; i < el.options.length; i += 1) {
      if (el.options[i].value === v) { el.value = v; return; }
    }
  }

  var test = false, keys = "";
  location.hash.slice(1).split("&").forEach(function (kv) {
    var at = kv.indexOf("="), k = at < 0 ? kv : kv.slice(0, at), v = "";
    try { v = at < 0 ? "" : decodeURIComponent(kv.slice(at + 1)); } catch (err) { return; }
    if (k === "filter" || k === "outcome") select(outcome, v);
    else if (k === "suite") select(suite, v);
    else if (k === "q") q.value = v;
    else if (k === "feedback-test") test = true;
    else if (k === "keys") keys = v;
  });
  [q, outcome, suite].forEach(function (el) { el.addEventListener("input", apply); });
  apply();

  function move(d) {
    var visible = cases.filter(function (c) { return !c.hidden; });
    if (!visible.length) return;
    var at = visible.indexOf(current);
    at = at < 0 ? (d > 0 ? 0 : visible.length - 1) : Math.min(visible.length - 1, Math.max(0, at + d));
    if (current) current.classList.remove("current");
    current = visible[at];
    current.classList.add("current");
    current.focus();
    current.scrollIntoView({ block: "start" });
  }

  document.addEventListener("keydown", function (ev) {
    var tag = ev.target && ev.target.tagName;
    if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT") {
      if (ev.key === "Escape") ev.target.blur();
      return;
    }
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    if (ev.key === "/") { ev.preventDefault(); q.focus(); }
    else if (ev.key === "j" || ev.key === "ArrowDown") { ev.preventDefault(); move(1); }
    else if (ev.key === "k" || ev.key === "ArrowUp") { ev.preventDefault(); move(-1); }
  });

  // Keys given in the address are pressed once loaded (`#keys=jj`), for the tests.
  keys.split("").forEach(function (key) {
    document.dispatchEvent(new KeyboardEvent("keydown", { key: key, bubbles: true }));
  });

  cases.forEach(function (c) {
    var f = c.querySelector("fieldset.review");
    if (!f) return;
    var touched = function () { f.setAttribute("data-at", new Date().toISOString()); };
    f.addEventListener("change", touched);
    f.addEventListener("input", touched);
  });

  function feedback() {
    var items = [];
    cases.forEach(function (c) {
      var key = data.case_runs[Number(c.getAttribute("data-i"))];
      var f = c.querySelector("fieldset.review");
      var v = f && f.querySelector("input:checked");
      if (!key || !v) return;
      items.push({
        suite: key.suite, "case": key["case"], run: key.run, variant: key.variant,
        verdict: v.value, note: f.querySelector("textarea").value,
        at: f.getAttribute("data-at") || ""
      });
    });
    return { schema: data.schema, run: data.run, items: items };
  }

  document.getElementById("download").addEventListener("click", function () {
    var blob = new Blob([JSON.stringify(feedback(), null, 2) + "\n"], { type: "application/json" });
    var url = URL.createObjectURL(blob);
    var a = document.createElement("a");
    a.href = url;
    a.download = "feedback.json";
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(function () { URL.revokeObjectURL(url); }, 1000);
  });

  if (test) {
    var out = document.getElementById("feedback-out");
    out.textContent = JSON.stringify(feedback());
    out.hidden = false;
  }
})();
