// matrix.html: filters (also from the query string, e.g. ?target=cpu&release=current) and sortable columns.
// Without this file the page is a complete plain table; nothing is loaded from elsewhere.
(function () {
  "use strict";
  var table = document.getElementById("matrix");
  var form = document.getElementById("filters");
  if (!table || !form) { return; }
  var body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);
  var shown = document.getElementById("shown");
  var selects = Array.prototype.slice.call(form.querySelectorAll("select"));

  function matches(row) {
    return selects.every(function (select) {
      var want = select.value;
      return !want || (row.getAttribute("data-" + select.name) || "").split(" ").indexOf(want) >= 0;
    });
  }

  function apply() {
    var n = 0;
    rows.forEach(function (row) {
      var ok = matches(row);
      row.hidden = !ok;
      if (ok) { n += 1; }
    });
    shown.textContent = n + " of " + rows.length + " rows shown";
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

  var headers = Array.prototype.slice.call(table.tHead.rows[0].cells);
  headers.forEach(function (th, col) {
    var button = document.createElement("button");
    button.type = "button";
    button.textContent = th.textContent;
    th.textContent = "";
    th.appendChild(button);
    button.addEventListener("click", function () {
      var ascending = th.getAttribute("aria-sort") !== "ascending";
      headers.forEach(function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
      rows.sort(function (a, b) {
        var c = compare(key(a, col), key(b, col));
        return ascending ? c : -c;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });

  var query = new URLSearchParams(window.location.search);
  selects.forEach(function (select) {
    var wanted = query.get(select.name);
    if (wanted && Array.prototype.some.call(select.options, function (o) { return o.value === wanted; })) {
      select.value = wanted;
    }
  });
  form.addEventListener("change", apply);
  form.addEventListener("reset", function () { window.setTimeout(apply, 0); });
  form.hidden = false;
  apply();
}());
