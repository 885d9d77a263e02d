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
      incrs: [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600, 43200, 86400, 172800, 604800],
      values: (u, ticks, _i, _space, incr) => ticks.map((t) => {
        const iso = new Date(t * 1000).toISOString();
        return incr >= 86400 ? iso.slice(0, 10) : iso.slice(11, incr >= 60 ? 16 : 19);
      }),
    }, { size: 60 }],
    scales: { x: { time: true } },
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
  };
  const plot = new uPlot(opts, data, el);
  const onResize = () => plot.setSize({ width: width(), height });
  window.addEventListener('resize', onResize);
  return {
    push(t, values) {
      data[0].push(t);
      values.forEach((v, i) => data[i + 1].push(v));
      plot.setData(data);
    },
    set(xs, columns) {
      data[0] = xs;
      columns.forEach((c, i) => { data[i + 1] = c; });
      plot.setData(data);
    },
    destroy() {
      window.removeEventListener('resize', onResize);
      plot.destroy();
    },
  };
}
