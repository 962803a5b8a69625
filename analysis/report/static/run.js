// The one-run view: every signal one run recorded, each a small Plotly panel, with its spikes, its divergence and
// the facts about it (status, arm, LR, seed, config, the code that made it). Data: analysis/explore/run_data.py's
// curves (name → run → [steps, values]), layers (run → layer → [steps, values]), events (run → [[step, kind,
// value]]) and info (run → facts). Used by the report's run panel (explore.js) and the dashboard's /run page.
window.harnessRun = (function () {
  var config = {responsive: true, displaylogo: false};
  var PANELS = [["train_loss", "training loss"], ["val_loss", "validation loss"], ["lr", "learning rate"],
                ["grad_norm", "grad norm (before clipping)"], ["attention", "max attention logit, per layer"],
                ["output_logit_max_abs", "max |output logit|"], ["output_log_z_mean", "mean log Z"]];
  var SPIKES = {train_loss: ["loss_spike", "loss spike"], grad_norm: ["grad_norm_spike", "grad-norm spike"]};
  var LAYER_COLORS = ["#0173b2", "#de8f05", "#029e73", "#d55e00", "#cc78bc", "#ca9161", "#fbafe4", "#949494"];
  var DIVERGED = "#a11";

  function smooth(values, weight) {  // debiased exponential moving average (pandas' ewm(adjust=True))
    if (!weight) return values;
    var num = 0, den = 0;
    return values.map(function (v) { num = weight * num + v; den = weight * den + 1; return num / den; });
  }

  function decades(series) {  // a log axis where every value is positive and they span a decade or more
    var values = [].concat.apply([], series);
    if (!values.length || values.some(function (v) { return !(v > 0); })) return false;
    return Math.max.apply(null, values) / Math.min.apply(null, values) >= 10;
  }

  function escapeHtml(text) {
    var entities = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"};
    return String(text).replace(/[&<>"']/g, function (c) { return entities[c]; });
  }

  function divergedAt(info, events) {
    if (info.diverged_at_step !== null && info.diverged_at_step !== undefined) return info.diverged_at_step;
    var found = events.filter(function (e) { return e[1] === "diverged"; })[0];
    return found ? found[0] : null;
  }

  function near(curve, step) {  // the curve's value at the bucket holding `step` (an event's own value may be missing)
    var i = 0;
    while (i + 1 < curve[0].length && curve[0][i + 1] <= step) i++;
    return curve[1][i];
  }

  function traces(name, view, runId, options) {
    var color = options.color || "#333", line = {color: color, width: 1.5};
    var hover = "step %{x}: %{y:.4g}<extra></extra>";
    if (name === "attention") {
      var layers = (view.layers || {})[runId] || {};
      return Object.keys(layers).sort(function (a, b) { return a - b; }).map(function (layer, i) {
        return {type: "scatter", mode: "lines", name: "layer " + layer, x: layers[layer][0], y: layers[layer][1],
                line: {color: LAYER_COLORS[i % LAYER_COLORS.length], width: 1.5},
                hovertemplate: "layer " + layer + "<br>" + hover};
      });
    }
    var curve = (view.curves[name] || {})[runId];
    if (!curve) return [];
    var drawn = [];
    if (name === "train_loss" && options.ema) {
      drawn.push({type: "scatter", mode: "lines", name: "raw", x: curve[0], y: curve[1],
                  line: {color: "#bbb", width: 1}, hovertemplate: "raw<br>" + hover});
      drawn.push({type: "scatter", mode: "lines", name: "smoothed (EMA " + options.ema + ")", x: curve[0],
                  y: smooth(curve[1], options.ema), line: line, hovertemplate: hover});
    } else {
      drawn.push({type: "scatter", mode: curve[0].length < 20 ? "lines+markers" : "lines", name: name,
                  x: curve[0], y: curve[1],
                  line: line, marker: {size: 4, color: color}, hovertemplate: hover});
    }
    var spike = SPIKES[name], events = ((view.events || {})[runId] || []).filter(function (e) {
      return spike && e[1] === spike[0];
    });
    if (events.length) drawn.push({type: "scatter", mode: "markers", name: spike[1] + "s",
      x: events.map(function (e) { return e[0]; }),
      y: events.map(function (e) { return e[2] === null ? near(curve, e[0]) : e[2]; }),
      marker: {symbol: name === "train_loss" ? "circle-open" : "triangle-up-open", size: 11, color: DIVERGED,
               line: {width: 2}},
      hovertemplate: spike[1] + " at step %{x}: %{y:.4g}<extra></extra>"});
    return drawn;
  }

  function layout(title, drawn, diverged) {
    var ys = drawn.filter(function (t) { return t.mode !== "markers"; }).map(function (t) { return t.y; });
    var values = [].concat.apply([], ys), low = Math.min.apply(null, values), high = Math.max.apply(null, values);
    var yaxis = {type: decades(ys) ? "log" : "linear", exponentformat: "power"};
    // a constant (an LR without a schedule): a range around it, as Plotly's own would be empty
    if (low === high && low !== 0) yaxis.range = [low - Math.abs(low) / 2, high + Math.abs(high) / 2];
    var result = {title: {text: title, font: {size: 13}, x: 0.02}, height: 230, margin: {t: 32, b: 36, l: 56, r: 10},
                  hovermode: "closest", showlegend: drawn.length > 1,
                  legend: {orientation: "h", y: -0.25, font: {size: 10}},
                  xaxis: {title: {text: "step", standoff: 4}}, yaxis: yaxis};
    if (diverged !== null) {
      result.shapes = [{type: "line", xref: "x", yref: "paper", x0: diverged, x1: diverged, y0: 0, y1: 1,
                        line: {color: DIVERGED, dash: "dash", width: 1.5}}];
      result.annotations = [{x: diverged, xref: "x", y: 1, yref: "paper", text: "diverged", showarrow: false,
                             xanchor: "right",
                             yanchor: "top", font: {color: DIVERGED, size: 11}}];
    }
    if (result.showlegend) result.height += 24;
    return result;
  }

  function row(name, value) { return "<tr><th>" + escapeHtml(name) + "</th><td>" + escapeHtml(value) + "</td></tr>"; }

  function g(value, digits) {
    if (value === null || value === undefined) return "";
    return (+value).toPrecision(digits || 5).replace(/\.?0+(e|$)/, "$1");
  }

  function spikeText(events) {
    var parts = [];
    [["loss_spike", "loss spike"], ["grad_norm_spike", "grad-norm spike"]].forEach(function (kind) {
      var steps = events.filter(function (e) { return e[1] === kind[0]; }).map(function (e) { return e[0]; });
      var several = steps.length > 1;
      if (steps.length) parts.push(steps.length + " " + kind[1] + (several ? "s" : "") + " (step" +
                                   (several ? "s " : " ") + steps.slice(0, 8).join(", ") +
                                   (steps.length > 8 ? ", …" : "") + ")");
    });
    return parts.join("; ") || "none";
  }

  function code(p) {
    if (!p.harness_version && !p.git_commit) return "";
    var state = p.git_dirty === true ? " (dirty)" : p.git_dirty === false ? " (clean)" : "";
    var commit = p.git_commit ? " @ " + String(p.git_commit).slice(0, 7) + state : "";
    var mixed = p.code_versions > 1 ? "; resumed under other code (" + p.code_versions + " versions)" : "";
    return "harness " + (p.harness_version || "?") + commit + mixed;
  }

  function facts(info, events, label, metric) {
    var p = info.provenance || {}, diverged = divergedAt(info, events);
    var rows = [["status", info.status + (diverged !== null ? " at step " + diverged : "")],
                ["sweep", info.sweep || ""],
                ["arm", label], ["LR", info.lr === null ? "searched" : g(info.lr, 3)], ["seed", info.seed],
                ["steps", info.last_step === null ? "" : info.last_step + 1],
                ["final validation loss", g(info.final_val_loss)],
                ["best validation loss", g(info.best_val_loss)], ["spikes", spikeText(events)],
                ["parameters", info.params === null ? "" : Number(info.params).toLocaleString("en")],
                ["code", code(p)],
                ["torch, Lightning, Python",
                 [p.torch_version, p.lightning_version, p.python_version].filter(Boolean).join(", ")],
                ["device, precision", [p.device_name, p.trainer_precision].filter(Boolean).join(", ")],
                ["host", info.host || ""],
                ["started, finished", [info.started_at, info.finished_at].filter(Boolean).join(" → ")],
                ["segments", info.n_segments || ""]];
    var shownAlready = metric === "final_val_loss" || metric === "best_val_loss";
    if (metric && info[metric] !== undefined && !shownAlready) rows.splice(6, 0, [metric, g(info[metric])]);
    var shown = rows.filter(function (r) { return r[1] !== "" && r[1] !== null && r[1] !== undefined; });
    var keys = Object.keys(info.config || {}).sort();
    var config = keys.map(function (k) {
      var value = info.config[k];
      return row(k, typeof value === "object" ? JSON.stringify(value) : value);
    }).join("");
    return '<table class="facts">' + shown.map(function (r) { return row(r[0], r[1]); }).join("") + "</table>" +
      (keys.length ? '<details class="config"><summary>config (' + keys.length + " fields)</summary>" +
                     '<table class="facts">' + config + "</table></details>" : "");
  }

  // Draw run `runId` of `view` into `box` (holding .run-title, .run-facts and .run-panels); options: arms (name →
  // {label, color}), ema (the training loss' smoothing), metric. Returns false when the view has no such run.
  function draw(box, view, runId, options) {
    var info = view.info[runId];
    if (!info) return false;
    options = options || {};
    var arm = (options.arms || {})[info.arm] || {}, label = arm.label || info.arm;
    var events = (view.events || {})[runId] || [];
    var diverged = divergedAt(info, events);
    box.querySelector(".run-title").textContent = "run " + runId + ": " + label + ", LR " +
      (info.lr === null ? "searched" : g(info.lr, 3)) + ", seed " + info.seed + ", " + info.status;
    box.querySelector(".run-facts").innerHTML = facts(info, events, label, options.metric);
    var panels = box.querySelector(".run-panels");
    panels.innerHTML = "";
    PANELS.forEach(function (panel) {
      var cell = document.createElement("div");
      var drawn = traces(panel[0], view, runId, {color: arm.color, ema: options.ema});
      cell.className = "run-panel";
      cell.dataset.signal = panel[0];
      panels.appendChild(cell);
      if (!drawn.length) {
        cell.innerHTML = '<p class="empty">' + escapeHtml(panel[1]) + ": not logged.</p>";
        return;
      }
      var plot = document.createElement("div");
      plot.className = "plot";
      cell.appendChild(plot);
      Plotly.newPlot(plot, drawn, layout(panel[1], drawn, diverged), config);
    });
    return true;
  }

  return {draw: draw, smooth: smooth, escapeHtml: escapeHtml};
})();
