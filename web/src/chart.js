// Time-series charts with uPlot (the pinned npm package, embedded with the app).
import uPlot from './vendor/uPlot.esm.js';

const palette = ['#1e88e5', '#43a047', '#fb8c00', '#8e24aa', '#e53935', '#00897b'];

// A line chart of `names` over time (x: unix seconds). Returns {push(t, values), destroy()}.
export function lineChart(el, names, { height = 220, bars = false } = {}) {
  const data = [[], ...names.map(() => [])];
  const width = () => Math.max(320, el.clientWidth || 640);
  const opts = {
    width: width(),
    height,
    series: [{}, ...names.map((n, i) => ({
      label: n,
      stroke: palette[i % palette.length],
      width: 2,
      fill: bars ? palette[i % palette.length] + '55' : undefined,
      paths: bars ? uPlot.paths.bars({ size: [0.6, 60] }) : undefined,
      points: { show: bars ? false : undefined },
    }))],
    // Whole seconds at least, and ticks labelled as UTC clock times or days.
    axes: [{
      space: 90,
      incrs: bars ? [86400, 172800, 604800, 2592000]
        : [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600, 43200, 86400, 172800, 604800],
      values: (u, ticks, _i, _space, incr) => ticks.map((t) => {
        const iso = new Date(t * 1000).toISOString();
        return incr >= 86400 ? iso.slice(0, 10) : iso.slice(11, incr >= 60 ? 16 : 19);
      }),
    }, { size: 60 }],
    scales: {
      x: { time: true },
      y: { range: (u, min, max) => [0, Math.max(1, max) * 1.1] },
    },
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
  };
  const plot = new uPlot(opts, data, el);
  const onResize = () => plot.setSize({ width: width(), height });
  // The legend shows the latest values until the pointer picks a point.
  const showLast = () => {
    if (data[0].length > 0 && !(plot.cursor.left >= 0)) plot.setLegend({ idx: data[0].length - 1 });
  };
  window.addEventListener('resize', onResize);
  return {
    push(t, values) {
      data[0].push(t);
      values.forEach((v, i) => data[i + 1].push(v));
      plot.setData(data);
      showLast();
    },
    set(xs, columns) {
      data[0] = xs;
      columns.forEach((c, i) => { data[i + 1] = c; });
      plot.setData(data);
      if (bars && xs.length > 0) {
        // Days as bars: half a day of room on each side, so a single day is a bar, not an edge.
        plot.setScale('x', { min: xs[0] - 43200, max: xs[xs.length - 1] + 43200 });
      }
      showLast();
    },
    destroy() {
      window.removeEventListener('resize', onResize);
      plot.destroy();
    },
  };
}
