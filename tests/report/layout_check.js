// layout_check.js — appended (inside <script>) to a copy of an HTML page by
// html_layout_test.sh; after load it appends a pre element, id layout-check, with one
// line per problem and a last line "LAYOUT viewport=W problems=N".
// A problem: the page wider than the window (it scrolls sideways); a table
// wider than the box it sits in (its last columns fall off, or hide behind
// a scroll bar); a figure or image wider than its box.
window.addEventListener('load', function () {
  var vw = document.documentElement.clientWidth, problems = [];
  var docw = document.documentElement.scrollWidth;
  if (docw > vw) problems.push('page ' + docw + 'px wide in a ' + vw + 'px window');
  function name(e) {
    return e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') +
      (e.closest('[id]') && !e.id ? ' in #' + e.closest('[id]').id : '');
  }
  document.querySelectorAll('table, figure, img, svg.flame, pre').forEach(function (e) {
    if (e.id === 'layout-check') return;
    var box = e.parentElement, r = e.getBoundingClientRect();
    var inner = box.getBoundingClientRect().left + box.clientLeft + box.clientWidth;
    if (e.scrollWidth > box.clientWidth + 1 || r.right > inner + 1 || r.right > vw + 1)
      problems.push(name(e) + ': ' + Math.round(r.width) + 'px wide (content ' + e.scrollWidth + 'px), its box ' +
                    box.clientWidth + 'px, right edge ' + Math.round(r.right) + ' of ' + vw);
  });
  var d = document.createElement('pre');
  d.id = 'layout-check';
  d.textContent = problems.join('\n') + (problems.length ? '\n' : '') +
    'LAYOUT viewport=' + vw + ' tables=' + document.querySelectorAll('table').length + ' problems=' + problems.length;
  document.body.appendChild(d);
});
