(function () {
  function key(tr, col) {
    var v = tr.getAttribute('data-' + col);
    if (v === null || v === '') return null;
    var n = parseFloat(v);
    return (col === 'name' || col === 'date' || isNaN(n)) ? v : n;
  }
  function sortTable(table, col, dir) {
    var tbody = table.tBodies[0];
    var rows = Array.prototype.slice.call(tbody.rows);
    rows.sort(function (a, b) {
      var x = key(a, col), y = key(b, col);
      if (x === null && y === null) return 0;
      if (x === null) return 1;
      if (y === null) return -1;
      var c = x < y ? -1 : (x > y ? 1 : 0);
      return dir === 'asc' ? c : -c;
    });
    rows.forEach(function (r, i) { tbody.appendChild(r); r.cells[0].textContent = String(i + 1); });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) {
      th.classList.remove('sorted-asc', 'sorted-desc');
      if (th.getAttribute('data-col') === col) th.classList.add('sorted-' + dir);
    });
    table.setAttribute('data-sorted', col + ':' + dir);
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
  });
  var params = new URLSearchParams(window.location.search);
  var col = params.get('sort');
  if (col) {
    var dir = params.get('dir') === 'asc' ? 'asc' : 'desc';
    document.querySelectorAll('table.lb').forEach(function (table) {
      if (table.tHead.querySelector('th[data-col="' + col.replace(/[^A-Za-z0-9_]/g, '') + '"]')) {
        sortTable(table, col, dir);
      }
    });
  }
  document.body.setAttribute('data-ready', '1');
})();
