// The report's interactive figures (plotly.js and run.js, inlined above). The data is the page's JSON element
// #harness-data (analysis/explore/payload.py): every run with its outcome and signals, the arms, and the fixed
// figures' Plotly JSON. The LR figure and the loss curves are computed here, so that the arm, LR and seed filters
// and the smoothing change the means and bands, not only what is shown. Bands follow analysis/plots/bands.py: the 95%
// t-interval from t_from seeds, the range of two, none for one. The same script draws the dashboard's overlay of
// several sweeps (analysis/report/overlay.py): there each arm is one sweep's, drawn in its sweep's dash.
(function () {
  var element = document.getElementById("harness-data");
  if (!element || !window.Plotly || !window.harnessRun) return;
  var data = JSON.parse(element.textContent);
  var byArm = {}, state = {arms: {}, seeds: {}, lr: "best", ema: data.ema, runs: false};
  data.arms.forEach(function (arm) { byArm[arm.name] = arm; state.arms[arm.name] = true; });
  data.seeds.forEach(function (seed) { state.seeds[seed] = true; });
  var config = {responsive: true, displaylogo: false};

  function pause() { if (window.harnessPauseReload) window.harnessPauseReload(); }

  function band(values) {  // mean, low, high and n of a list of numbers, by the rule above
    var n = values.length, mean = values.reduce(function (a, b) { return a + b; }, 0) / n;
    if (n >= data.t_from) {
      var sd = Math.sqrt(values.reduce(function (a, v) { return a + (v - mean) * (v - mean); }, 0) / (n - 1));
      var half = (n - 1 <= data.t975.length ? data.t975[n - 2] : 1.96) * sd / Math.sqrt(n);
      return {mean: mean, low: mean - half, high: mean + half, n: n};
    }
    if (n === 2) return {mean: mean, low: Math.min.apply(null, values), high: Math.max.apply(null, values), n: n};
    return {mean: mean, low: mean, high: mean, n: n};
  }

  var smooth = harnessRun.smooth, escapeHtml = harnessRun.escapeHtml;

  function sameLr(a, b) { return (a === null && b === null) || (a !== null && b !== null && Math.abs(a - b) <= 1e-12 * Math.abs(b)); }
  function shownRun(run) { return run.seed === null || state.seeds[run.seed]; }
  function runLr(arm) { return state.lr === "best" ? byArm[arm].best_lr : +state.lr; }

  function lrTraces() {
    var traces = [];
    data.arms.forEach(function (arm) {
      var runs = data.runs.filter(function (r) { return r.arm === arm.name && shownRun(r) && r.lr !== null && r.loss !== null; });
      if (!runs.length) return;
      var lrs = Array.from(new Set(runs.map(function (r) { return r.lr; }))).sort(function (a, b) { return a - b; });
      var points = lrs.map(function (lr) {
        var here = runs.filter(function (r) { return r.lr === lr; });
        var b = band(here.map(function (r) { return r.loss; }));
        b.lr = lr; b.diverged = here.filter(function (r) { return r.outcome === "diverged"; }).length;
        b.ids = here.map(function (r) { return r.run_id; }).join(", ");
        return b;
      });
      var common = {legendgroup: arm.name, meta: arm.name, type: "scatter"};
      traces.push(Object.assign({}, common, {
        name: arm.label, mode: "lines+markers", x: lrs, y: points.map(function (p) { return p.mean; }),
        line: {color: arm.color, dash: arm.dash || "solid"}, marker: {color: arm.color, size: 8},
        error_y: {type: "data", symmetric: false, array: points.map(function (p) { return p.high - p.mean; }),
                  arrayminus: points.map(function (p) { return p.mean - p.low; }), color: arm.color, thickness: 1.5, width: 5},
        customdata: points.map(function (p) { return [p.n, p.diverged, p.low, p.high, p.ids]; }),
        hovertemplate: arm.label + "<br>LR %{x:.3g}: %{y:.4g} [%{customdata[2]:.4g}, %{customdata[3]:.4g}]" +
          "<br>%{customdata[0]} seeds, %{customdata[1]} diverged<br>runs: %{customdata[4]}<extra></extra>"}));
      var diverged = points.filter(function (p) { return p.diverged > 0; });
      traces.push(Object.assign({}, common, {
        mode: "markers", showlegend: false, hoverinfo: "skip", x: diverged.map(function (p) { return p.lr; }),
        y: diverged.map(function (p) { return p.mean; }), marker: {symbol: "x-thin-open", size: 16, color: arm.color, line: {width: 2}}}));
      traces.push(Object.assign({}, common, {
        mode: "markers", showlegend: false, x: runs.map(function (r) { return r.lr; }), y: runs.map(function (r) { return r.loss; }),
        marker: {color: arm.color, size: 5, opacity: 0.35},
        customdata: runs.map(function (r) { return [r.run_id, r.seed, r.outcome, r.sweep]; }),
        hovertemplate: "run %{customdata[0]}<br>" + arm.label + ", seed %{customdata[1]} (%{customdata[2]})<br>LR %{x:.3g}: %{y:.4g}<extra></extra>"}));
    });
    return traces;
  }

  function curveTraces(series, panel, legend) {
    var traces = [], axes = {xaxis: "x" + (panel ? panel + 1 : ""), yaxis: "y" + (panel ? panel + 1 : "")};
    data.arms.forEach(function (arm) {
      var curves = data.curves[series] || {}, lr = runLr(arm.name), steps = {}, runs = data.runs.filter(function (r) {
        return r.arm === arm.name && shownRun(r) && r.outcome === "completed" && sameLr(r.lr, lr) && curves[r.run_id];
      });
      var common = Object.assign({legendgroup: arm.name, meta: arm.name, type: "scatter", mode: "lines"}, axes);
      runs.forEach(function (run) {
        var curve = curves[run.run_id], values = series === "train_loss" ? smooth(curve[1], state.ema) : curve[1];
        curve[0].forEach(function (step, i) { (steps[step] = steps[step] || []).push(values[i]); });
        if (state.runs) traces.push(Object.assign({}, common, {
          showlegend: false, x: curve[0], y: values, opacity: 0.45,
          line: {color: arm.color, width: 1, dash: arm.dash || "solid"},
          customdata: curve[0].map(function () { return [run.run_id, run.seed, run.outcome, run.sweep]; }),
          hovertemplate: "run %{customdata[0]} (seed %{customdata[1]})<br>step %{x}: %{y:.4g}<extra></extra>"}));
      });
      var xs = Object.keys(steps).map(Number).sort(function (a, b) { return a - b; });
      if (!xs.length) return;
      var bands = xs.map(function (x) { return band(steps[x]); });
      traces.push(Object.assign({}, common, {
        showlegend: false, hoverinfo: "skip", fill: "toself", fillcolor: arm.color, opacity: 0.2, line: {width: 0},
        x: xs.concat(xs.slice().reverse()), y: bands.map(function (b) { return b.high; }).concat(bands.map(function (b) { return b.low; }).reverse())}));
      traces.push(Object.assign({}, common, {
        name: arm.label, showlegend: legend, x: xs, y: bands.map(function (b) { return b.mean; }),
        line: {color: arm.color, width: 2, dash: arm.dash || "solid"},
        customdata: bands.map(function (b) { return b.n; }),
        hovertemplate: arm.label + " at LR " + (lr === null ? "?" : lr.toPrecision(3)) + "<br>step %{x}: %{y:.4g} (%{customdata} seeds)<extra></extra>"}));
    });
    return traces;
  }

  function axesLayout(titles, xs, ys, height) {
    var layout = {grid: {rows: 1, columns: titles.length, pattern: "independent"}, height: height || 380, hovermode: "closest",
                  margin: {t: 40, b: 50, l: 60, r: 10}, legend: {orientation: "h", y: -0.2}, uirevision: "keep"};
    titles.forEach(function (title, i) {
      var suffix = i ? i + 1 : "";
      layout["xaxis" + suffix] = xs[i];
      layout["yaxis" + suffix] = Object.assign({title: {text: title}}, ys[i] || {});
    });
    return layout;
  }

  function visibility(traces) {  // every trace of a hidden arm is hidden; its legend entry stays, to show it again
    return traces.map(function (trace) {
      return Object.assign({}, trace, {visible: state.arms[trace.legendgroup] === false ? "legendonly" : true});
    });
  }

  function draw() {
    Plotly.react("plot-lr", visibility(lrTraces()), axesLayout([data.metric], [{type: "log", title: {text: "learning rate"}}], [{}]), config);
    Plotly.react("plot-curves", visibility(curveTraces("train_loss", 0, true).concat(curveTraces("val_loss", 1, false))),
                 axesLayout(["training loss", "validation loss"], [{title: {text: "step"}}, {title: {text: "step"}}], []), config);
    Object.keys(data.fixed).forEach(function (name) {
      var fig = data.fixed[name];
      if (fig) Plotly.react("plot-" + name, visibility(fig.data), Object.assign({uirevision: "keep"}, fig.layout), config);
    });
    document.querySelectorAll("#arm-toggles input").forEach(function (box) { box.checked = state.arms[box.dataset.arm]; });
  }

  // One run: the panel below the figures, opened by a run link (#run=<id>) or a click on a run in a figure; a
  // run the page has no signals of (the overlay's) opens on the dashboard's run page instead.
  var opened = false;  // whether this page's own navigation opened the panel (then "back" is the browser's back)

  function runOptions() {
    var arms = {};
    data.arms.forEach(function (arm) { arms[arm.name] = arm; });
    return {arms: arms, ema: state.ema, metric: data.metric};
  }

  function showRun(runId) {
    var box = document.getElementById("run-detail");
    if (!box || !data.info || !data.info[runId]) return false;
    box.hidden = false;  // before drawing: a hidden panel has no width for its plots to fill
    harnessRun.draw(box, data, runId, runOptions());
    var page = document.getElementById("run-page"), index = document.body.dataset.index;
    if (page && index) {
      page.href = index + "run/" + encodeURIComponent(runId) + "?sweep=" +
        encodeURIComponent(data.info[runId].sweep || "");
      page.hidden = false;
    }
    var bar = document.getElementById("explore");  // sticky at the top: the panel's first line goes below it
    box.style.scrollMarginTop = (bar ? bar.offsetHeight + 8 : 0) + "px";
    box.scrollIntoView({block: "start"});
    return true;
  }

  function openRun(runId, sweep) {
    pause();
    if (data.info && data.info[runId]) {
      opened = true;
      if (location.hash === "#run=" + encodeURIComponent(runId)) showRun(runId);
      else location.hash = "run=" + encodeURIComponent(runId);
    } else if (document.body.dataset.index) {
      location.href = document.body.dataset.index + "run/" + encodeURIComponent(runId) +
        (sweep ? "?sweep=" + encodeURIComponent(sweep) : "");
    }
  }

  function route() {
    var found = /^#run=(.+)$/.exec(location.hash), box = document.getElementById("run-detail");
    if (found && showRun(decodeURIComponent(found[1]))) return;
    if (box) box.hidden = true;
  }

  function back(event) {
    event.preventDefault();
    if (opened) { opened = false; history.back(); return; }  // to where the run was opened from, scrolled as it was
    history.replaceState(null, "", location.pathname + location.search);
    route();
    (document.getElementById("explore") || document.body).scrollIntoView({block: "start"});
  }

  function toggleArm(arm, only) {
    pause();
    if (only) data.arms.forEach(function (a) { state.arms[a.name] = a.name === arm; });
    else state.arms[arm] = !state.arms[arm];
    draw();
    return false;  // the legend's own toggling would act on one figure only
  }

  function controls() {
    var box = document.getElementById("explore");
    var arms = data.arms.map(function (arm) {
      return '<label><input type="checkbox" data-arm="' + escapeHtml(arm.name) + '" checked><span class="swatch" style="background:' +
        arm.color + '"></span>' + escapeHtml(arm.label) + "</label>";
    }).join("");
    var lrs = ['<option value="best">each arm\'s best</option>'].concat(data.lrs.map(function (lr) {
      return '<option value="' + lr + '">' + lr.toPrecision(3) + "</option>";
    })).join("");
    var seeds = data.seeds.map(function (seed) { return '<label><input type="checkbox" data-seed="' + seed + '" checked>' + seed + "</label>"; }).join("");
    box.innerHTML = '<span id="arm-toggles"><b>Arms</b> ' + arms + '</span> <span><b>Curves at LR</b> <select id="lr-select">' + lrs +
      '</select></span> <span id="seed-toggles"><b>Seeds</b> ' + seeds + '</span> <span><b>Smoothing</b> <input id="ema" type="range" ' +
      'min="0" max="0.99" step="0.01" value="' + data.ema + '"><output id="ema-value">' + data.ema + '</output></span> ' +
      '<label><input type="checkbox" id="show-runs"> show runs</label>';
    box.querySelectorAll("#arm-toggles input").forEach(function (input) {
      input.addEventListener("change", function () { toggleArm(input.dataset.arm, false); });
    });
    box.querySelectorAll("#seed-toggles input").forEach(function (input) {
      input.addEventListener("change", function () { pause(); state.seeds[input.dataset.seed] = input.checked; draw(); });
    });
    document.getElementById("lr-select").addEventListener("change", function (e) { pause(); state.lr = e.target.value; draw(); });
    document.getElementById("ema").addEventListener("input", function (e) {
      pause(); state.ema = +e.target.value; document.getElementById("ema-value").textContent = e.target.value; draw();
    });
    document.getElementById("show-runs").addEventListener("change", function (e) { pause(); state.runs = e.target.checked; draw(); });
  }

  controls();
  draw();
  window.addEventListener("hashchange", function () {
    if (/^#run=/.test(location.hash)) { pause(); opened = true; }
    route();
  });
  document.querySelectorAll(".run-back").forEach(function (link) { link.addEventListener("click", back); });
  route();
  document.querySelectorAll(".plot").forEach(function (plot) {
    if (!plot.on) return;  // a figure with nothing to draw
    plot.on("plotly_legendclick", function (event) { return toggleArm(event.data[event.curveNumber].legendgroup, false); });
    plot.on("plotly_legenddoubleclick", function (event) { return toggleArm(event.data[event.curveNumber].legendgroup, true); });
    plot.on("plotly_relayout", function (event) { if (event && Object.keys(event).some(function (k) { return k.indexOf("range") >= 0; })) pause(); });
    plot.on("plotly_click", function (event) {
      var point = event.points[0], id = point && point.customdata && point.customdata[0];
      if (typeof id === "string") openRun(id, point.customdata[3]);
    });
  });
})();
