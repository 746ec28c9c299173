// The record list and the grids: search, filters and sortable columns, all kept in the page's address
// (?q=...&category=ddp&sort=case&order=desc) so that a view can be shared and reloads as it was; a permalink
// (#case/target/release) is brought into view. Without this file every table is complete; nothing is loaded from
// elsewhere.
(function () {
  "use strict";
  var table = document.querySelector("table[data-filterable]");
  var form = document.getElementById("filters");
  if (!table || !form) { return; }
  var body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);
  var original = rows.slice();
  var shown = document.getElementById("shown");
  var search = form.querySelector("input[name=q]");
  var selects = Array.prototype.slice.call(form.querySelectorAll("select"));
  var headers = Array.prototype.slice.call(table.tHead.rows[0].cells);
  var factsNode = document.getElementById("case-facts");
  var facts = factsNode ? JSON.parse(factsNode.textContent) : {};
  var unit = table.id === "grid" ? "cases" : "rows";
  var sorted = null;  // {key, ascending}

  function caseOf(row) {  // a grid row names its case; a record's id starts with it (case/target/release@dtype)
    return row.getAttribute("data-case") || row.id.split("/")[0];
  }

  var haystack = rows.map(function (row) {
    var more = facts[caseOf(row)] || "";
    return (row.textContent + " " + more).replace(/\s+/g, " ").toLowerCase();
  });

  function wanted() {
    return search.value.trim().toLowerCase().replace(/^#/, "");
  }

  function matches(row, n) {
    var q = wanted();
    if (q && haystack[n].indexOf(q) < 0) { return false; }
    return selects.every(function (select) {
      var want = select.value;
      return !want || (row.getAttribute("data-" + select.name) || "").split(" ").indexOf(want) >= 0;
    });
  }

  function apply() {
    var n = 0;
    original.forEach(function (row, i) {
      var ok = matches(row, i);
      row.hidden = !ok;
      if (ok) { n += 1; }
    });
    shown.textContent = n + " of " + original.length + " " + unit + " shown";
  }

  function key(row, col) {
    var cell = row.cells[col];
    return cell ? (cell.getAttribute("data-sort") || cell.textContent).trim() : "";
  }

  function compare(a, b) {
    var x = parseFloat(a), y = parseFloat(b);
    if (!isNaN(x) && !isNaN(y) && String(x) === a && String(y) === b) { return x - y; }
    return a.localeCompare(b, undefined, { numeric: true });
  }

  function sortBy(name, ascending) {
    var col = -1;
    headers.forEach(function (h, i) {
      h.removeAttribute("aria-sort");
      if (h.getAttribute("data-key") === name) { col = i; }
    });
    if (col < 0) { return false; }
    headers[col].setAttribute("aria-sort", ascending ? "ascending" : "descending");
    rows = original.slice();  // stable: equal keys keep the page's order
    rows.sort(function (a, b) {
      var c = compare(key(a, col), key(b, col));
      return ascending ? c : -c;
    });
    rows.forEach(function (row) { body.appendChild(row); });
    sorted = { key: name, ascending: ascending };
    return true;
  }

  function save() {
    var params = new URLSearchParams();
    if (search.value.trim()) { params.set("q", search.value.trim()); }
    selects.forEach(function (select) { if (select.value) { params.set(select.name, select.value); } });
    if (sorted) {
      params.set("sort", sorted.key);
      if (!sorted.ascending) { params.set("order", "desc"); }
    }
    var query = params.toString();
    window.history.replaceState(null, "", window.location.pathname + (query ? "?" + query : "") +
                                window.location.hash);
  }

  function restore() {
    var query = new URLSearchParams(window.location.search);
    search.value = query.get("q") || "";
    selects.forEach(function (select) {
      var want = query.get(select.name);
      select.value = want && Array.prototype.some.call(select.options, function (o) { return o.value === want; })
        ? want : "";
    });
    if (query.get("sort")) { sortBy(query.get("sort"), query.get("order") !== "desc"); }
  }

  headers.forEach(function (th) {
    var name = th.getAttribute("data-key");
    if (!name) { return; }
    var button = document.createElement("button");
    button.type = "button";
    while (th.firstChild) { button.appendChild(th.firstChild); }
    th.appendChild(button);
    button.addEventListener("click", function () {
      sortBy(name, th.getAttribute("aria-sort") !== "ascending");
      save();
    });
  });

  restore();
  form.addEventListener("input", function () { apply(); save(); });
  form.addEventListener("change", function () { apply(); save(); });
  form.addEventListener("submit", function (event) { event.preventDefault(); });
  form.addEventListener("reset", function () {
    window.setTimeout(function () {
      if (sorted) { rows = original.slice(); rows.forEach(function (row) { body.appendChild(row); }); }
      headers.forEach(function (h) { h.removeAttribute("aria-sort"); });
      sorted = null;
      apply();
      save();
    }, 0);
  });
  form.hidden = false;
  apply();

  // A permalink: its cell or row in the middle of the view (the table scrolls in its own box, under a sticky head).
  var id = decodeURIComponent(window.location.hash.slice(1));
  var target = id && document.getElementById(id);
  if (target && table.contains(target)) {
    var row = target.closest("tr");
    if (row && row.hidden) { form.reset(); }
    window.setTimeout(function () { target.scrollIntoView({ block: "center", inline: "center" }); }, 0);
  }
}());
