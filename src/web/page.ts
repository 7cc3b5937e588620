/**
 * The dashboard's browser script (plain ES2017, inlined into the page): one
 * uPlot chart per chart name of the points, one series per value name,
 * fed by the /events stream; the last 300 points are kept. Charts and series
 * appear as the points name them, so ports and lcores added or removed in
 * the shell show up without a reload. `window.dpkitPoints` holds what
 * arrived, for tests and the curious.
 */
export const DASHBOARD_SCRIPT = `
(function () {
  var KEEP = 300;
  var charts = {};
  var points = (window.dpkitPoints = []);
  var root = document.getElementById('charts');
  function chart(name) {
    var c = charts[name];
    if (c) return c;
    var div = document.createElement('div');
    div.className = 'chart';
    root.appendChild(div);
    c = charts[name] = { div: div, series: [], data: [[]], plot: null };
    return c;
  }
  function rebuild(name, c) {
    if (c.plot) c.plot.destroy();
    var opts = {
      title: name, width: 500, height: 220,
      scales: { x: { time: true } },
      series: [{}].concat(c.series.map(function (s, i) { return { label: s, stroke: 'hsl(' + (i * 67) % 360 + ',70%,45%)', width: 1.5 }; })),
    };
    c.plot = new uPlot(opts, c.data, c.div);
  }
  function add(p) {
    points.push(p);
    if (points.length > KEEP) points.shift();
    Object.keys(p.charts).forEach(function (name) {
      var c = chart(name);
      var values = p.charts[name];
      var grew = false;
      Object.keys(values).forEach(function (s) {
        if (c.series.indexOf(s) < 0) { c.series.push(s); c.data.push(c.data[0].map(function () { return null; })); grew = true; }
      });
      c.data[0].push(p.time / 1000);
      c.series.forEach(function (s, i) { c.data[i + 1].push(s in values ? values[s] : null); });
      if (c.data[0].length > KEEP) c.data.forEach(function (col) { col.shift(); });
      if (grew || !c.plot) rebuild(name, c); else c.plot.setData(c.data);
    });
    document.getElementById('state').textContent = p.forwarding ? 'forwarding' : 'stopped';
  }
  var es = new EventSource('/events');
  es.onmessage = function (e) { add(JSON.parse(e.data)); };
})();
`;
