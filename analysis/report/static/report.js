// Sortable tables: click a header to sort by it; a second click reverses. Cells carry data-sort (numbers or
// text; empty last).
document.querySelectorAll("table.sortable").forEach(function (table) {
  table.querySelectorAll("th").forEach(function (th, column) {
    th.addEventListener("click", function () {
      var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
      var ascending = th.dataset.order !== "asc";
      th.dataset.order = ascending ? "asc" : "desc";
      rows.sort(function (a, b) {
        var x = a.cells[column].dataset.sort, y = b.cells[column].dataset.sort;
        if (x === "" || y === "") return (x === "") - (y === "");
        var nx = parseFloat(x), ny = parseFloat(y);
        var order = isNaN(nx) || isNaN(ny) ? x.localeCompare(y) : nx - ny;
        return ascending ? order : -order;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
});

// A running sweep's page reloads itself every data-reload seconds, unless the reader paused it (the pause
// holds across reloads of this page, and exploring a figure pauses it: a reload would undo the zoom).
(function () {
  var seconds = +document.body.dataset.reload, button = document.getElementById("reload-toggle");
  if (!seconds || !button) return;
  var key = "harness-pause:" + location.pathname, timer = null, state = document.getElementById("reload-state");
  var running = state.textContent;  // what reloads it: "… while the sweep runs", "… while the run trains"
  function show() {
    var paused = sessionStorage.getItem(key) === "1";
    button.textContent = paused ? "resume reloading" : "pause reloading";
    state.textContent = paused ? "reloading paused" : running;
    clearTimeout(timer);
    if (!paused) timer = setTimeout(function () { location.reload(); }, seconds * 1000);
  }
  button.addEventListener("click", function () {
    sessionStorage.setItem(key, sessionStorage.getItem(key) === "1" ? "0" : "1");
    show();
  });
  window.harnessPauseReload = function () { sessionStorage.setItem(key, "1"); show(); };
  show();
})();
