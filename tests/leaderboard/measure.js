/* Layout facts of the leaderboard page, posted as JSON to the framing page (test_layout.py). */
(function () {
  function box(el) { var r = el.getBoundingClientRect(); return { left: r.left, right: r.right, top: r.top, bottom: r.bottom, width: r.width, height: r.height }; }
  function names(table) { return Array.prototype.map.call(table.tBodies[0].rows, function (tr) { return tr.querySelector('td.name').textContent; }); }
  var root = document.documentElement;
  var out = { innerWidth: window.innerWidth, clientWidth: root.clientWidth, scrollWidth: root.scrollWidth, boards: [] };
  document.querySelectorAll('section.board').forEach(function (section) {
    var h2 = section.querySelector('h2');
    var frame = section.querySelector('.frame');
    var table = frame.querySelector('table.lb');
    var row = table.tBodies[0].rows[0];
    var cells = [row.querySelector('td.rank'), row.querySelector('td.name'), row.querySelector('td.first'), row.cells[row.cells.length - 1]];
    var before = cells.map(box);
    frame.scrollLeft = frame.scrollWidth;
    var scrolled = frame.scrollLeft;
    var after = cells.map(box);
    frame.scrollLeft = 0;
    var plots = Array.prototype.map.call(section.querySelectorAll('svg.fp'), function (svg) {
      var b = box(svg);
      return { kind: svg.classList.contains('fp-all') ? 'all' : 'stratum', metric: svg.getAttribute('data-metric'),
               width: b.width, height: b.height, left: b.left, right: b.right, top: b.top,
               marks: svg.querySelectorAll('.fp-mark').length, na: svg.querySelectorAll('.fp-na').length,
               rows: svg.querySelectorAll('g.fp-row').length, ticks: svg.querySelectorAll('.fp-tick').length };
    });
    var board = { title: h2.textContent, tooltip: h2.getAttribute('title'), text: section.textContent,
                  frame: { scrollWidth: frame.scrollWidth, clientWidth: frame.clientWidth, scrolled: scrolled, right: box(frame).right },
                  before: before, after: after, plots: plots, order: names(table) };
    var select = section.querySelector('select.rank-by');
    if (select && select.options.length > 1) {
      var metric = select.options[select.options.length - 1].value;
      select.value = metric;
      select.dispatchEvent(new Event('change'));
      var top = table.tBodies[0].rows[0].getAttribute('data-run');
      var g = section.querySelector('svg.fp g.fp-row[data-run="' + top + '"]');
      board.reranked = { metric: metric, order: names(table), ranked: table.getAttribute('data-ranked'),
                         rule: section.querySelector('.rank-rule').textContent, topTransform: g && g.getAttribute('transform'),
                         controlHidden: select.closest('.rank-control').hidden };
    }
    out.boards.push(board);
  });
  window.parent.postMessage(JSON.stringify(out), '*');  /* to the framing page (browser.framed) */
})();
