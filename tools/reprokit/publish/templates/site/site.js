// The index, the record list and the grids: search, filters and sortable columns, all kept in the page's address
// (?q=...&category=ddp&sort=case&order=desc) so that a view can be shared and reloads as it was; a permalink
// (#case/target/release) is brought into view; a grid cell's tooltip stays inside the window and closes on Escape.
// Without this file every table is complete; nothing is loaded from elsewhere.
(function () {
  "use strict";

  // An issue as people paste it, anywhere in the text: its address, owner/repo#N, #N or "issue N". What is left is
  // words; a question's filler words are no words to find.
  var ISSUES = /(?:https?:\/\/)?(?:www\.)?github\.com\/[\w.-]+\/[\w.-]+\/(?:issues|pull)\/(\d+)[^\s]*|(?:[\w.-]+\/[\w.-]+)?#(\d+)\b|\b(?:issue|pr|pull request)\s*#?\s*(\d+)\b/gi;
  var FILLER = ("a about all am an and any are as at be been but by can could did do does for from has have how i if in " +
    "is it its me my of on or our please show tell that the there this those to was we were what whats when where " +
    "whether which who why will with would you hardware machine machines still yet now anything something")
    .split(" ").reduce(function (set, w) { set[w] = true; return set; }, {});

  function query(text) {
    var issues = [];
    var rest = text.replace(ISSUES, function (all, a, b, c) { issues.push("#" + (a || b || c) + " "); return " "; });
    var words = [], ignored = [];
    rest.toLowerCase().split(/[\s,;:!?()"'“”‘’]+/).forEach(function (raw) {
      var w = raw.replace(/^[#.]+|[.]+$/g, "");
      if (!w) { return; }
      if (Object.prototype.hasOwnProperty.call(FILLER, w)) { ignored.push(w); } else { words.push(w); }
    });
    return { issues: issues, words: words, ignored: ignored };
  }

  function tooltips(table) {
    var open = null;  // the cell whose tooltip shows
    function place(cell) {
      var tip = cell.querySelector(".tip");
      if (!tip) { return; }
      cell.classList.remove("tip-closed");
      open = cell;
      var box = cell.getBoundingClientRect();
      var width = document.documentElement.clientWidth, height = document.documentElement.clientHeight;
      var w = tip.offsetWidth, h = tip.offsetHeight;
      tip.style.left = Math.max(4, Math.min(box.left, width - w - 4)) + "px";
      tip.style.top = (box.bottom + h + 4 <= height ? box.bottom : Math.max(4, box.top - h)) + "px";
    }
    // A focused cell comes wholly into view: clear of the sticky case column and header, inside its scrolling box and
    // the window (a phone's 390 px show two or three release columns beside the case column).
    function reveal(cell) {
      var row = cell.parentNode, stuck = row.cells[0], head = table.tHead;
      cell.style.scrollMarginLeft = (stuck && stuck !== cell ? stuck.getBoundingClientRect().width : 0) + 6 + "px";
      cell.style.scrollMarginTop = (head ? head.getBoundingClientRect().height : 0) + 6 + "px";
      cell.scrollIntoView({ block: "nearest", inline: "nearest" });
    }
    function cellOf(node) { return node && node.closest ? node.closest("td") : null; }
    function focused() { return cellOf(document.activeElement && table.contains(document.activeElement) ? document.activeElement : null); }
    table.classList.add("tips-placed");
    table.addEventListener("focusin", function (e) { var c = cellOf(e.target); if (c) { reveal(c); place(c); } });
    table.addEventListener("mouseover", function (e) {
      var c = cellOf(e.target);
      if (c && c !== open) { place(c); }
    });
    table.addEventListener("mouseleave", function () {
      if (open) { open.classList.remove("tip-closed"); }
      open = focused();  // the focused cell's tooltip still shows: Escape must still find it
      if (open) { place(open); }
    });
    table.addEventListener("focusout", function (e) {
      var c = cellOf(e.target);
      if (c) { c.classList.remove("tip-closed"); }
    });
    document.addEventListener("keydown", function (e) {
      if (e.key !== "Escape") { return; }
      // every tooltip that shows closes: the one last placed, the focused cell's and the one under the mouse
      [open, focused()].concat(Array.prototype.slice.call(table.querySelectorAll("td:hover"))).forEach(function (c) {
        if (c) { c.classList.add("tip-closed"); }
      });
    });
    document.addEventListener("scroll", function () { if (open && !open.classList.contains("tip-closed")) { place(open); } },
                              { capture: true, passive: true });
  }

  // A badge's Markdown names the site's address where the build was given it; else this page's own, found here.
  Array.prototype.forEach.call(document.querySelectorAll("code.badge-markdown"), function (code) {
    if (/\]\(https?:/.test(code.textContent) || !/^https?:$/.test(window.location.protocol)) { return; }
    var at = function (name) { return new URL(code.getAttribute("data-" + name), document.baseURI).href; };
    code.textContent = code.textContent.split("](" + code.getAttribute("data-svg") + ")").join("](" + at("svg") + ")")
      .split("](" + code.getAttribute("data-grid") + ")").join("](" + at("grid") + ")");
  });

  var table = document.querySelector("table[data-filterable]");
  var form = document.getElementById("filters");
  if (table && table.classList.contains("grid")) { tooltips(table); }
  if (!table || !form) { return; }
  var body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);
  var original = rows.slice();
  var shown = document.getElementById("shown");
  var search = form.querySelector("input[name=q]");
  var selects = Array.prototype.slice.call(form.querySelectorAll("select"));
  var on = form.querySelector("select[name=on]");  // the release a grid's verdict filter reads
  var headers = Array.prototype.slice.call(table.tHead.rows[0].cells);
  var factsNode = document.getElementById("case-facts");
  var facts = factsNode ? JSON.parse(factsNode.textContent) : {};
  var unit = table.getAttribute("data-unit") || "rows";
  var sorted = null;  // {key, ascending}

  function caseOf(row) {  // a grid row names its case; a record's id starts with it (case/target/release@dtype)
    return row.getAttribute("data-case") || row.id.split("/")[0];
  }

  var haystack = rows.map(function (row) {
    var more = facts[caseOf(row)] || "";
    return (row.textContent + " " + more + " ").replace(/\s+/g, " ").toLowerCase();
  });

  function defaultOf(select) { return select.getAttribute("data-default") || ""; }

  // Words that name hardware (site/hardware_words.py: a target, its family, a model number such as H200, 910b,
  // MI300 as a prefix of MI300X): each leads to its targets. A recorded target's word finds the rows that name the
  // target; an unrecorded one's the rows that mention the word, and the note says no such hardware has run the corpus.
  var hardwareNode = document.getElementById("hardware-words");
  var hardware = hardwareNode ? JSON.parse(hardwareNode.textContent) : { words: {}, targets: {} };
  var note = document.getElementById("target-note");
  var searchNote = document.getElementById("search-note");

  function targetsOf(word) {
    if (Object.prototype.hasOwnProperty.call(hardware.words, word)) { return hardware.words[word]; }
    if (word.length < 3) { return []; }
    var found = [];
    Object.keys(hardware.words).forEach(function (w) {
      if (w.indexOf(word) === 0) {
        hardware.words[w].forEach(function (t) { if (found.indexOf(t) < 0) { found.push(t); } });
      }
    });
    return found;
  }

  // The query as the rows are matched: each word a list of alternatives (a recorded target's word: the word or a
  // target it names), the issues, the hardware words with their targets.
  function plan(q) {
    var named = [], terms = [];
    q.words.forEach(function (w) {
      var targets = targetsOf(w);
      if (targets.length) {
        named.push({ word: w, targets: targets });
        var recorded = targets.filter(function (t) { return hardware.targets[t].recorded; });
        terms.push({ word: w, any: [w].concat(recorded), hardware: true });
      } else {
        terms.push({ word: w, any: [w], hardware: false });
      }
    });
    return { issues: q.issues, terms: terms, named: named, ignored: q.ignored };
  }

  function holds(n, term) {
    return term.any.some(function (w) { return haystack[n].indexOf(w) >= 0; });
  }

  function matches(row, n, p, terms) {
    if (p.issues.length && !p.issues.some(function (i) { return haystack[n].indexOf(i) >= 0; })) { return false; }
    if (!terms.every(function (t) { return holds(n, t); })) { return false; }
    return selects.every(function (select) {
      var want = select.value;
      if (select === on || !want) { return true; }
      var have = (row.getAttribute("data-" + select.name) || "").split(" ");
      if (on && select.name === "verdict" && want === "history") {  // a history run: on whichever release it ran
        return have.some(function (v) { return v.slice(-8) === "=history"; });
      }
      if (on && select.name === "verdict") { want = on.value + "=" + want; }
      return have.indexOf(want) >= 0;
    });
  }

  var explained = "";  // what the note answers now: it is rebuilt only when that changes (a click on its link blurs the
  // search box, whose change event must not replace the link under the pointer)

  function explain(named) {
    var names = [];
    named.forEach(function (h) { h.targets.forEach(function (t) { if (names.indexOf(t) < 0) { names.push(t); } }); });
    var said = named.map(function (h) { return h.word + ":" + h.targets.join(","); }).join(" ");
    if (!note || said === explained) { return; }
    explained = said;
    note.textContent = "";
    names.forEach(function (name, i) {
      var t = hardware.targets[name];
      var words = named.filter(function (h) { return h.targets.indexOf(name) >= 0; }).map(function (h) { return h.word; });
      var part = document.createElement("span");
      var link = document.createElement("a");
      link.href = t.grid;
      if (t.recorded) {
        part.textContent = (i ? " " : "") + words.join(", ") + " → target " + name + " (" + t.hardware +
          (t.ran_on.length ? "; its runs were made on " + t.ran_on.join(", ") : "") +
          "): the " + unit + " recorded there are shown. ";
        link.textContent = "Its grid: " + name;
      } else {
        part.textContent = (i ? " " : "") + name + " (" + t.hardware + "): not recorded (no such hardware has run " +
          "it): no case has a verdict there. ";
        link.textContent = "How to contribute a run on " + name;
      }
      note.appendChild(part);
      note.appendChild(link);
      note.appendChild(document.createTextNode("."));
    });
    note.hidden = names.length === 0;
  }

  function say(text) {
    if (!searchNote) { return; }
    searchNote.textContent = text;
    searchNote.hidden = !text;
  }

  function quoted(words) { return words.map(function (w) { return "“" + w + "”"; }).join(", "); }

  // On a phone's narrow screen a long table shows PAGE matching rows at a time, a button below it the next ones: the
  // whole table is in the page (without JavaScript all of it shows), only the layout of the rows not asked for waits.
  var PAGE = 100;
  var paged = original.length > PAGE && !!window.matchMedia && window.matchMedia("(max-width: 40rem)").matches;
  var limit = paged ? PAGE : Infinity;
  var position = new Map();
  original.forEach(function (row, i) { position.set(row, i); });
  var more = null;
  if (paged) {
    more = document.createElement("button");
    more.type = "button";
    more.className = "more";
    (table.closest(".scroll") || table).insertAdjacentElement("afterend", more);
    more.addEventListener("click", function () { limit += PAGE; apply(); });
  }

  // Which rows a query finds, and what the search note says: with an issue, the rows that link it (a word of the
  // question that none of them holds is left out, and named); without one, a word that no row holds is left out and
  // named, as long as another word is left to search by; an empty result says why and what to try.
  function found(p) {
    var all = original.map(function (row) { return position.get(row); });
    var base = all.filter(function (n) { return matches(original[n], n, p, []); });
    var missing = p.terms.filter(function (t) {
      return !t.hardware && !base.some(function (n) { return holds(n, t); });
    });
    var terms = p.terms, dropped = [];
    if (missing.length && (p.issues.length || missing.length < p.terms.length)) {
      terms = p.terms.filter(function (t) { return missing.indexOf(t) < 0; });
      dropped = missing.map(function (t) { return t.word; });
    }
    var hits = {};
    base.forEach(function (n) { if (matches(original[n], n, p, terms)) { hits[n] = true; } });
    var count = Object.keys(hits).length, notes = [];
    if (p.issues.length) {
      notes.push("Searched by issue " + p.issues.map(function (i) { return i.trim(); }).join(", ") +
                 (count ? "" : ": no " + unit + " here links it"));
    }
    if (dropped.length) {
      notes.push("left out " + quoted(dropped) + (p.issues.length ? ": not in the " + unit + " the issue found"
                 : ": no " + unit.replace(/s$/, "") + " holds it"));
    }
    if (p.ignored.length && (p.issues.length || dropped.length || !count)) {
      notes.push("ignored the question's filler words " + quoted(p.ignored));
    }
    if (!count && p.terms.length + p.issues.length) {
      var none = p.terms.filter(function (t) { return !base.some(function (n) { return holds(n, t); }); });
      notes.push((none.length ? "no " + unit.replace(/s$/, "") + " holds " + quoted(none.map(function (t) { return t.word; }))
                  : "each word is found, but no " + unit.replace(/s$/, "") + " holds all of them") +
                 (base.length < all.length ? " with the filters chosen" : "") + ". Try fewer words, an issue " +
                 "number (#N), a case id, a category or a target (" + Object.keys(hardware.targets).join(", ") +
                 ")" + (base.length < all.length ? ", or clear the filters" : ""));
    }
    var text = notes.join("; ");
    return { hits: hits, note: text ? text.charAt(0).toUpperCase() + text.slice(1) + "." : "" };
  }

  function apply() {
    var n = 0, visible = 0, p = plan(query(search.value)), result = found(p);
    explain(p.named);
    say(result.note);
    rows.forEach(function (row) {
      var ok = !!result.hits[position.get(row)];
      if (ok) { n += 1; }
      row.hidden = !ok || n > limit;
      if (!row.hidden) { visible += 1; }
    });
    shown.textContent = n + " of " + original.length + " " + unit + " shown" +
      (visible < n ? " (the first " + visible + " on this narrow screen; the button below the table shows more)" : "");
    if (more) {
      more.hidden = visible >= n;
      more.textContent = "Show " + Math.min(PAGE, n - visible) + " more of the " + (n - visible) + " not shown";
    }
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
    selects.forEach(function (select) {
      if (select.value && select.value !== defaultOf(select)) { params.set(select.name, select.value); }
    });
    if (sorted) {
      params.set("sort", sorted.key);
      if (!sorted.ascending) { params.set("order", "desc"); }
    }
    var address = params.toString();
    window.history.replaceState(null, "", window.location.pathname + (address ? "?" + address : "") +
                                window.location.hash);
  }

  function restore() {
    var address = new URLSearchParams(window.location.search);
    search.value = address.get("q") || "";
    selects.forEach(function (select) {
      var want = address.get(select.name);
      select.value = want && Array.prototype.some.call(select.options, function (o) { return o.value === want; })
        ? want : defaultOf(select);
    });
    if (address.get("sort")) { sortBy(address.get("sort"), address.get("order") !== "desc"); }
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
      apply();
      save();
    });
  });

  restore();
  form.addEventListener("input", function () { limit = paged ? PAGE : limit; apply(); save(); });
  form.addEventListener("change", function () { limit = paged ? PAGE : limit; apply(); save(); });
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

  // A permalink: a grid's cell in the middle of the view, a record's row just below the table's sticky head (the
  // table scrolls in its own box); again once the page has loaded, after the browser's own jump to the fragment.
  var id = decodeURIComponent(window.location.hash.slice(1));
  var target = id && document.getElementById(id);
  if (target && table.contains(target)) {
    var row = target.closest("tr");
    if (row && paged) { limit = Math.max(limit, rows.indexOf(row) + 1, original.indexOf(row) + 1); apply(); }
    if (row && row.hidden) { form.reset(); }
    var bring = function () {
      if (target.tagName === "TR") {
        target.style.scrollMarginTop = (table.tHead.getBoundingClientRect().height + 12) + "px";
        target.scrollIntoView({ block: "start", inline: "nearest" });
      } else {
        target.scrollIntoView({ block: "center", inline: "center" });
      }
    };
    window.setTimeout(bring, 0);
    window.addEventListener("load", function () { window.setTimeout(bring, 0); });
  }
}());
