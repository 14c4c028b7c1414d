// crucible's HTML report: renders the per-op table and the charts from the run's data (the
// JSON in #crucible-data). Every text from the run goes into the page as text (textContent),
// never as markup. The URL fragment drives the table, so a link can carry a view:
//   report.html#sort=speedup&order=desc&q=relu&verdict=wrong
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("crucible-data").textContent);
  var summary = data.summary || {};
  var opsObj = summary.ops || {};

  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    if (attrs) for (var k in attrs) if (attrs[k] !== undefined && attrs[k] !== null) e.setAttribute(k, attrs[k]);
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function fmt(x, digits) {
    if (x === undefined || x === null || !isFinite(x)) return "";
    if (x === 0) return "0";
    var a = Math.abs(x);
    if (Number.isInteger(x) && a < 1e6) return String(x);
    if (a >= 1e4 || a < 1e-3) return x.toExponential(2);
    return x.toPrecision(digits || 3);
  }

  // ---- the per-op table -------------------------------------------------------------------
  function verdictOf(o) {
    var st = o.status || {};
    if (o.passed) return "correct";
    if (!o.supported) return "unsupported";
    if ((st.skipped || 0) === o.cases) return "skipped";
    return "wrong";
  }
  var rows = Object.keys(opsObj).map(function (name) {
    var o = opsObj[name];
    var st = o.status || {};
    return {
      op: name,
      family: o.family || "-",
      verdict: verdictOf(o),
      cases: o.cases || 0,
      passed: st.passed || 0,
      not_passed: (o.cases || 0) - (st.passed || 0) - (st.skipped || 0) - (st.unsupported || 0),
      max_abs_err: o.max_abs_err,
      max_ulp_err: o.max_ulp_err,
      min_pcc: o.min_pcc,
      speedup: o.speedup === undefined ? null : o.speedup,
      pct_of_peak: o.pct_of_peak === undefined ? null : o.pct_of_peak,
      gbps: o.gbps === undefined ? null : o.gbps,
      gflops: o.gflops === undefined ? null : o.gflops,
      error: o.first_failure || o.first_timing_error || ""
    };
  });
  var columns = [
    ["op", "op", false], ["family", "family", false], ["verdict", "verdict", false],
    ["cases", "cases", true], ["passed", "passed", true], ["not_passed", "failing", true],
    ["max_abs_err", "max abs err", true], ["max_ulp_err", "max ulp err", true],
    ["min_pcc", "min PCC", true], ["speedup", "speed-up", true], ["pct_of_peak", "% of peak", true],
    ["gbps", "GB/s", true], ["gflops", "GFLOP/s", true], ["error", "first error", false]
  ];

  function viewFromHash() {
    var p = new URLSearchParams(location.hash.replace(/^#/, ""));
    return { sort: p.get("sort") || "op", order: p.get("order") === "desc" ? "desc" : "asc",
             q: p.get("q") || "", verdict: p.get("verdict") || "" };
  }
  function setHash(v) {
    var p = new URLSearchParams();
    if (v.sort !== "op") p.set("sort", v.sort);
    if (v.order === "desc") p.set("order", "desc");
    if (v.q) p.set("q", v.q);
    if (v.verdict) p.set("verdict", v.verdict);
    var h = p.toString();
    history.replaceState(null, "", h ? "#" + h : location.pathname + location.search);
    renderTable();
  }
  function compare(key, order) {
    var numeric = columns.some(function (c) { return c[0] === key && c[2]; });
    return function (a, b) {
      var x = a[key], y = b[key], r;
      if (numeric) {
        // ops without a value (not timed) go last in either order
        var xn = x === null || x === undefined, yn = y === null || y === undefined;
        if (xn || yn) return xn === yn ? a.op.localeCompare(b.op) : (xn ? 1 : -1);
        r = x - y;
      } else {
        r = String(x).localeCompare(String(y));
      }
      if (r === 0) r = a.op.localeCompare(b.op);
      return order === "desc" ? -r : r;
    };
  }
  function renderTable() {
    var v = viewFromHash();
    if (!columns.some(function (c) { return c[0] === v.sort; })) v.sort = "op";
    var table = document.getElementById("op-table");
    var thead = table.querySelector("thead");
    thead.textContent = "";
    var hr = el("tr");
    columns.forEach(function (c) {
      var th = el("th", { "data-key": c[0], "class": c[2] ? "num" : null }, c[1]);
      if (c[0] === v.sort) th.setAttribute("aria-sort", v.order === "desc" ? "descending" : "ascending");
      th.addEventListener("click", function () {
        var cur = viewFromHash();
        var order = cur.sort === c[0] && cur.order === "asc" ? "desc" : "asc";
        setHash({ sort: c[0], order: order, q: cur.q, verdict: cur.verdict });
      });
      hr.appendChild(th);
    });
    thead.appendChild(hr);
    var q = v.q.toLowerCase();
    var shown = rows.filter(function (r) {
      if (v.verdict && r.verdict !== v.verdict) return false;
      if (!q) return true;
      return (r.op + " " + r.family + " " + r.error).toLowerCase().indexOf(q) >= 0;
    }).sort(compare(v.sort, v.order));
    var tbody = table.querySelector("tbody");
    tbody.textContent = "";
    shown.forEach(function (r) {
      var tr = el("tr", { "data-op": r.op, "data-verdict": r.verdict });
      columns.forEach(function (c) {
        var val = r[c[0]];
        var td;
        if (c[2]) {
          var text = c[0] === "speedup" && val !== null ? fmt(val) + "\u00d7" : fmt(val);
          td = el("td", { "class": "num", "data-key": c[0],
                          "data-value": val === null || val === undefined ? "" : String(val) }, text);
        } else {
          td = el("td", { "data-key": c[0] }, val);
          if (c[0] === "verdict") td.className = "verdict-" + val;
        }
        tr.appendChild(td);
      });
      tbody.appendChild(tr);
    });
    document.getElementById("op-count").textContent = shown.length + " of " + rows.length + " ops shown";
    table.setAttribute("data-shown", String(shown.length));
    var qi = document.getElementById("filter");
    if (qi.value !== v.q) qi.value = v.q;
    var vs = document.getElementById("verdict-filter");
    if (vs.value !== v.verdict) vs.value = v.verdict;
  }
  document.getElementById("filter").addEventListener("input", function (e) {
    var cur = viewFromHash();
    cur.q = e.target.value;
    setHash(cur);
  });
  document.getElementById("verdict-filter").addEventListener("change", function (e) {
    var cur = viewFromHash();
    cur.verdict = e.target.value;
    setHash(cur);
  });
  window.addEventListener("hashchange", renderTable);
  renderTable();

  // ---- charts -----------------------------------------------------------------------------
  if (typeof Chart === "undefined") throw new Error("Chart.js did not load");
  Chart.defaults.animation = false;
  Chart.defaults.maintainAspectRatio = false;
  var statusColors = { passed: "#2e8b57", failed: "#c0392b", crashed: "#8e44ad", timed_out: "#d35400",
                       memory_limit: "#7f8c8d", unsupported: "#b7950b", skipped: "#95a5a6",
                       invalid_case: "#34495e", compile_error: "#e67e22" };

  function chartPanel(id, title, wide) {
    var box = el("div", { "class": wide ? "chart wide" : "chart" });
    var canvas = el("canvas", { id: id, role: "img", "aria-label": title });
    box.appendChild(canvas);
    document.getElementById("charts").appendChild(box);
    return canvas;
  }
  function note(text) {
    document.getElementById("chart-notes").appendChild(el("p", { "class": "note" }, text));
  }
  function titled(t) { return { display: true, text: t }; }

  var timings = data.timings || [];
  // The speed-up distribution: timed cases per power-of-two bin.
  if (timings.length > 0) {
    var logs = timings.map(function (t) { return Math.log2(t.speedup); });
    var lo = Math.floor(Math.min.apply(null, logs)), hi = Math.ceil(Math.max.apply(null, logs));
    if (hi === lo) hi = lo + 1;
    var labels = [], counts = [];
    for (var b = lo; b < hi; ++b) {
      labels.push(fmt(Math.pow(2, b)) + "\u2013" + fmt(Math.pow(2, b + 1)) + "\u00d7");
      counts.push(0);
    }
    logs.forEach(function (l) { counts[Math.min(hi - lo - 1, Math.floor(l) - lo)]++; });
    var c1 = chartPanel("chart-speedups", "speed-up distribution");
    new Chart(c1, { type: "bar",
      data: { labels: labels, datasets: [{ label: "timed cases", data: counts, backgroundColor: "#3b6fb6" }] },
      options: { plugins: { title: titled("Speed-up distribution (" + timings.length + " timed cases, against " + (summary.baseline || summary.reference || "the baseline") + ")") },
                 scales: { x: { title: titled("speed-up") }, y: { title: titled("cases"), beginAtZero: true } } } });
    c1.setAttribute("data-points", String(timings.length));

    // The roofline: every timed case with a FLOP count against the machine's peaks.
    var peaks = data.peaks;
    var pts = timings.filter(function (t) { return t.flops > 0 && t.bytes > 0 && t.gflops > 0; })
                     .map(function (t) { return { x: t.flops / t.bytes, y: t.gflops, op: t.op }; });
    if (pts.length > 0) {
      var datasets = [{ label: "timed cases", data: pts, backgroundColor: "#3b6fb6", pointRadius: 3 }];
      if (peaks && peaks.triad_gbps > 0 && peaks.peak_f32_gflops > 0) {
        var xs = pts.map(function (p) { return p.x; });
        var x0 = Math.min.apply(null, xs) / 4, x1 = Math.max.apply(null, xs) * 4;
        var ridge = peaks.peak_f32_gflops / peaks.triad_gbps;
        var roof = [{ x: x0, y: Math.min(peaks.peak_f32_gflops, peaks.triad_gbps * x0) }];
        if (ridge > x0 && ridge < x1) roof.push({ x: ridge, y: peaks.peak_f32_gflops });
        roof.push({ x: x1, y: Math.min(peaks.peak_f32_gflops, peaks.triad_gbps * x1) });
        datasets.push({ label: "roofline (" + fmt(peaks.triad_gbps) + " GB/s, " + fmt(peaks.peak_f32_gflops) + " GFLOP/s)",
                        data: roof, showLine: true, borderColor: "#c0392b", pointRadius: 0, fill: false });
      } else {
        note("The roofline has no roof: this run did not measure the machine's peaks.");
      }
      var c2 = chartPanel("chart-roofline", "roofline");
      new Chart(c2, { type: "scatter", data: { datasets: datasets },
        options: { plugins: { title: titled("Roofline: timed cases against the measured peaks"),
                              tooltip: { callbacks: { label: function (ctx) { var p = ctx.raw; return (p.op || "roof") + ": " + fmt(p.x) + " FLOP/B, " + fmt(p.y) + " GFLOP/s"; } } } },
                   scales: { x: { type: "logarithmic", title: titled("arithmetic intensity (FLOP/byte)") },
                             y: { type: "logarithmic", title: titled("GFLOP/s") } } } });
      c2.setAttribute("data-points", String(pts.length));
    }
    var noFlops = timings.length - pts.length;
    if (noFlops > 0) note(noFlops + " timed case(s) do no floating-point work (copies, views, indexing) and are not on the roofline; their GB/s is in the table.");
  } else {
    note("No speed-up distribution or roofline: the run was not timed (crucible run --perf times it).");
  }

  // Per-family bars: speed-ups when timed, else the share of correct ops.
  var fams = summary.families || {};
  var famNames = Object.keys(fams);
  if (famNames.length > 0) {
    var c3 = chartPanel("chart-families", "per-family speed-ups");
    new Chart(c3, { type: "bar",
      data: { labels: famNames, datasets: [
        { label: "geometric mean speed-up", data: famNames.map(function (f) { return fams[f].speedup; }), backgroundColor: "#3b6fb6" },
        { label: "slowest op", data: famNames.map(function (f) { return fams[f].min_speedup; }), backgroundColor: "#e39b3b" }] },
      options: { plugins: { title: titled("Speed-up per op family (correct, timed ops)") },
                 scales: { y: { type: "logarithmic", title: titled("speed-up") } } } });
    c3.setAttribute("data-points", String(famNames.length));
  } else {
    var byFam = {};
    rows.forEach(function (r) {
      var f = byFam[r.family] || (byFam[r.family] = { correct: 0, total: 0 });
      f.total++;
      if (r.verdict === "correct") f.correct++;
    });
    var names = Object.keys(byFam).sort();
    var c3b = chartPanel("chart-families", "per-family correctness");
    new Chart(c3b, { type: "bar",
      data: { labels: names, datasets: [{ label: "% of ops correct", backgroundColor: "#2e8b57",
              data: names.map(function (f) { return 100 * byFam[f].correct / byFam[f].total; }) }] },
      options: { plugins: { title: titled("Correct ops per op family") },
                 scales: { y: { beginAtZero: true, max: 100, title: titled("% of ops") } } } });
    c3b.setAttribute("data-points", String(names.length));
  }

  // Model runs: the op-by-op timeline (the graph's nodes in order) or each model's outputs.
  var nodes = data.nodes || [];
  if (nodes.length > 0) {
    var timedNodes = nodes.some(function (n) { return n.seconds > 0; });
    var c4 = chartPanel("chart-timeline", "op-by-op timeline", true);
    new Chart(c4, { type: "bar",
      data: { labels: nodes.map(function (n) { return (n.file ? n.file + ":" : "line ") + n.line + " " + n.op; }),
              datasets: [{ label: timedNodes ? "time on the candidate x occurrences (ms)" : "node (by status)",
                           data: nodes.map(function (n) { return timedNodes ? 1e3 * n.seconds * Math.max(1, n.cnt) : 1; }),
                           backgroundColor: nodes.map(function (n) { return statusColors[n.status] || "#555"; }) }] },
      options: { plugins: { title: titled("Op-by-op timeline: the graph's unique nodes in order, coloured by verdict"), legend: { display: false } },
                 scales: { x: { ticks: { autoSkip: true, maxRotation: 60 } }, y: { beginAtZero: true, title: titled(timedNodes ? "ms" : "") } } } });
    c4.setAttribute("data-points", String(nodes.length));
  }
  var models = data.models || [];
  if (models.length > 0) {
    var labelsM = [], ratios = [], colors = [];
    models.forEach(function (m) {
      m.outputs.forEach(function (o) {
        labelsM.push(m.model + ": " + o.name);
        ratios.push(o.ratio);
        colors.push(o.ratio <= 1 ? "#2e8b57" : "#c0392b");
      });
    });
    var c5 = chartPanel("chart-timeline", "model outputs", true);
    new Chart(c5, { type: "bar",
      data: { labels: labelsM, datasets: [{ label: "error against the f64 run / allowed error", data: ratios, backgroundColor: colors }] },
      options: { plugins: { title: titled("Model timeline: every output of every model in graph order, error / allowed (above 1 fails)"), legend: { display: false } },
                 scales: { x: { ticks: { autoSkip: true, maxRotation: 60 } }, y: { type: "logarithmic", title: titled("error / allowed") } } } });
    c5.setAttribute("data-points", String(labelsM.length));
  }
  // Each chart says how many of its pixels were painted (a test reads it from the page).
  Array.prototype.forEach.call(document.querySelectorAll("#charts canvas"), function (c) {
    var px = c.getContext("2d").getImageData(0, 0, c.width, c.height).data, n = 0;
    for (var i = 3; i < px.length; i += 4) if (px[i] !== 0) ++n;
    c.setAttribute("data-painted", String(n));
  });
  document.documentElement.setAttribute("data-ready", "1");
})();
