// The compare view (compare.html): the two columns chosen in its form, kept in the address (?a=cpu@2.13.0&b=cpu@2.14.1)
// so that a view can be shared; every case recorded in either, those whose verdicts differ first, then those skipped on
// one side and run on the other, then those recorded on one side only, then the same (site/compare.py's rule and order). Without this file the page shows its default view.
(function () {
  "use strict";

  function comparePage(data, form) {
    var pick = { a: form.querySelector("select[name=a]"), b: form.querySelector("select[name=b]") };
    var body = document.querySelector("#compare-table tbody");
    var ORDER = ["yes", "skipped vs ran", "one side", "no"];
    function differs(left, right) {  // as site/compare.differs: a run whose verdict differs, neither of them "~";
      if (!(left && right)) { return "one side"; }  // a skip against a run is listed apart
      var pairs = Object.keys(left[1]).filter(function (k) {
        var x = left[1][k], y = right[1][k];
        return y !== undefined && x !== "~" && y !== "~" && x !== y;
      }).map(function (k) { return [left[1][k], right[1][k]]; });
      if (pairs.some(function (p) { return p[0] !== "skipped" && p[1] !== "skipped"; })) { return "yes"; }
      return pairs.length ? "skipped vs ran" : "no";
    }
    function labelOf(select) { return select.options[select.selectedIndex].textContent; }
    function cell(tag, text) { var c = document.createElement(tag); c.textContent = text; return c; }
    function render() {
      var a = pick.a.value, b = pick.b.value, rows = [];
      Object.keys(data).forEach(function (id) {
        var left = data[id][a], right = data[id][b];
        if (left || right) {
          rows.push({ id: id, a: left ? left[0] : "", b: right ? right[0] : "", differs: differs(left, right) });
        }
      });
      rows.sort(function (x, y) {
        return ORDER.indexOf(x.differs) - ORDER.indexOf(y.differs) || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0);
      });
      body.textContent = "";
      rows.forEach(function (r) {
        var tr = document.createElement("tr"), th = document.createElement("th"), link = cell("a", r.id);
        tr.setAttribute("data-case", r.id);
        tr.setAttribute("data-differs", r.differs);
        th.scope = "row";
        link.href = "cases/" + encodeURIComponent(r.id) + ".html";
        th.appendChild(link);
        tr.appendChild(th);
        tr.appendChild(cell("td", r.a || "not recorded"));
        tr.appendChild(cell("td", r.b || "not recorded"));
        tr.appendChild(cell("td", r.differs));
        body.appendChild(tr);
      });
      document.getElementById("compare-a").textContent = labelOf(pick.a);
      document.getElementById("compare-b").textContent = labelOf(pick.b);
      document.getElementById("compare-count").textContent = rows.filter(function (r) { return r.differs === "yes"; })
        .length + " of " + rows.length + " cases differ";
    }
    var address = new URLSearchParams(window.location.search);
    ["a", "b"].forEach(function (side) {
      var want = address.get(side);
      if (want && Array.prototype.some.call(pick[side].options, function (o) { return o.value === want; })) {
        pick[side].value = want;
      }
    });
    form.addEventListener("change", function () {
      render();
      var params = new URLSearchParams();
      params.set("a", pick.a.value);
      params.set("b", pick.b.value);
      window.history.replaceState(null, "", window.location.pathname + "?" + params.toString());
    });
    form.addEventListener("submit", function (event) { event.preventDefault(); });
    render();
  }

  var data = document.getElementById("compare-data");
  var form = document.getElementById("compare-form");
  if (data && form) { comparePage(JSON.parse(data.textContent), form); }
}());
