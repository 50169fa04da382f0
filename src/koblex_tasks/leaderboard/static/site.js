(function () {
  /* Sorting (column headers, ?sort=<col>&dir=asc|desc) and ranking (the "Rank by" select, ?rank=<metric>).
     Ranking follows Board.ranked_runs: the chosen column in its direction, runs without a value after the
     others, ties and those runs by the rest of the table's data-rank-by chain, then submission order. */
  function key(tr, col) {
    var v = tr.getAttribute('data-' + col);
    if (v === null || v === '') return null;
    var n = parseFloat(v);
    return (col === 'name' || col === 'date' || isNaN(n)) ? v : n;
  }
  function cmp(x, y) { return x < y ? -1 : (x > y ? 1 : 0); }
  function runId(tr) { return parseInt(tr.getAttribute('data-run'), 10); }
  function place(table, rows) {
    var tbody = table.tBodies[0];
    var order = {};
    rows.forEach(function (r, i) { tbody.appendChild(r); r.cells[0].textContent = String(i + 1); order[r.getAttribute('data-run')] = i; });
    var section = document.getElementById(table.getAttribute('data-section'));
    if (!section) return;
    section.querySelectorAll('svg.fp').forEach(function (svg) {
      var top = parseFloat(svg.getAttribute('data-top')), h = parseFloat(svg.getAttribute('data-row-height'));
      svg.querySelectorAll('g.fp-row').forEach(function (g) {
        var i = order[g.getAttribute('data-run')];
        if (i !== undefined) g.setAttribute('transform', 'translate(0,' + (top + i * h) + ')');
      });
    });
  }
  function markHeader(table, col, dir) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) {
      th.classList.remove('sorted-asc', 'sorted-desc');
      if (col && th.getAttribute('data-col') === col) th.classList.add('sorted-' + dir);
    });
  }
  function control(table) { return document.querySelector('select.rank-by[data-table="' + table.id + '"]'); }
  function sortTable(table, col, dir) {
    var rows = Array.prototype.slice.call(table.tBodies[0].rows);
    rows.sort(function (a, b) {
      var x = key(a, col), y = key(b, col);
      if (x === null && y === null) return 0;
      if (x === null) return 1;
      if (y === null) return -1;
      return dir === 'asc' ? cmp(x, y) : -cmp(x, y);
    });
    place(table, rows);
    markHeader(table, col, dir);
    table.setAttribute('data-sorted', col + ':' + dir);
    table.removeAttribute('data-ranked');
    var select = control(table);
    if (select) select.selectedIndex = -1;
  }
  function rankTable(table, metric) {
    var chain = (table.getAttribute('data-rank-by') || '').split(' ').filter(Boolean);
    if (chain.indexOf(metric) < 0) return false;
    var lower = (table.getAttribute('data-lower-better') || '').split(' ');
    chain = [metric].concat(chain.filter(function (c) { return c !== metric; }));
    var rows = Array.prototype.slice.call(table.tBodies[0].rows);
    rows.sort(function (a, b) {
      for (var i = 0; i < chain.length; i++) {
        var x = key(a, chain[i]), y = key(b, chain[i]);
        if (x === null && y === null) continue;
        if (x === null) return 1;
        if (y === null) return -1;
        var c = lower.indexOf(chain[i]) >= 0 ? cmp(x, y) : -cmp(x, y);
        if (c !== 0) return c;
      }
      return runId(a) - runId(b);
    });
    place(table, rows);
    markHeader(table, null, null);
    table.removeAttribute('data-sorted');
    table.setAttribute('data-ranked', metric);
    var select = control(table);
    if (select) {
      select.value = metric;
      var rule = table.closest('section').querySelector('.rank-rule');
      var option = select.options[select.selectedIndex];
      if (rule && option) rule.textContent = option.getAttribute('data-rule');
    }
    return true;
  }
  document.querySelectorAll('table.lb').forEach(function (table) {
    table.tHead.querySelectorAll('th.sortable').forEach(function (th) {
      function go() {
        var col = th.getAttribute('data-col');
        var cur = table.getAttribute('data-sorted') || '';
        var def = (col === 'name' || col === 'date') ? 'asc' : 'desc';
        var dir = cur === col + ':' + def ? (def === 'asc' ? 'desc' : 'asc') : def;
        sortTable(table, col, dir);
      }
      th.addEventListener('click', go);
      th.addEventListener('keydown', function (ev) { if (ev.key === 'Enter') go(); });
    });
    var select = control(table);
    if (select) {
      select.addEventListener('change', function () { rankTable(table, select.value); });
      select.closest('.rank-control').hidden = false;
    }
  });
  var params = new URLSearchParams(window.location.search);
  var rank = params.get('rank');
  if (rank) document.querySelectorAll('table.lb').forEach(function (table) { rankTable(table, rank); });
  var col = params.get('sort');
  if (col) {
    var dir = params.get('dir') === 'asc' ? 'asc' : 'desc';
    document.querySelectorAll('table.lb').forEach(function (table) {
      if (table.tHead.querySelector('th[data-col="' + col.replace(/[^A-Za-z0-9_]/g, '') + '"]')) {
        sortTable(table, col, dir);
      }
    });
  }
  function openTarget() {  /* a link to a run's provenance opens its <details> (and the list around it) */
    var id = decodeURIComponent(window.location.hash.slice(1));
    var el = id && document.getElementById(id);
    for (; el; el = el.parentElement) { if (el.tagName === 'DETAILS') el.open = true; }
  }
  window.addEventListener('hashchange', openTarget);
  openTarget();
  document.body.setAttribute('data-ready', '1');
})();
