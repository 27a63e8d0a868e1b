// Overview: cluster health, leader, members, backpressure, and charts of runs
// per second, success rate and trigger lateness computed here from successive
// samples of GET /metrics (counters and histogram buckets differenced).
import { get, getText } from './api.js';
import { h, fill, svg, problem } from './ui.js';
import { parsePrometheus, sum, buckets, quantile, lineChart, stackedBar } from './charts.js';

const POLL_MS = 3000;
const KEEP = 100;  // samples: five minutes at 3 s
const history = [];  // kept across visits so the charts do not restart empty

function sample(text) {
  const s = parsePrometheus(text);
  return {
    t: Date.now(),
    runs: sum(s, 'worker_executions_total'),
    ok: sum(s, 'worker_executions_total', { status: 'success' }),
    lateSum: sum(s, 'scheduler_trigger_lateness_seconds_sum'),
    lateCount: sum(s, 'scheduler_trigger_lateness_seconds_count'),
    lateBuckets: buckets(s, 'scheduler_trigger_lateness_seconds'),
    instances: Object.fromEntries(s.filter((x) => x.name === 'scheduler_instances')
      .map((x) => [x.labels.state, x.value])),
    dispatched: sum(s, 'scheduler_dispatch_total'),
  };
}

/// Per-interval series from successive samples.
function series() {
  const runs = [], rate = [], late = [], p95 = [];
  for (let i = 1; i < history.length; i++) {
    const a = history[i - 1], b = history[i];
    const dt = (b.t - a.t) / 1000;
    const n = b.runs - a.runs;
    runs.push({ t: b.t, v: dt > 0 && n >= 0 ? n / dt : null });
    rate.push({ t: b.t, v: n > 0 ? (100 * (b.ok - a.ok)) / n : null });
    const c = b.lateCount - a.lateCount;
    late.push({ t: b.t, v: c > 0 ? (1000 * (b.lateSum - a.lateSum)) / c : null });
    const q = quantile(a.lateBuckets, b.lateBuckets, 0.95);
    p95.push({ t: b.t, v: q === null ? null : q * 1000 });
  }
  return { runs, rate, late, p95 };
}

export default function overview(view) {
  const health = h('div', { class: 'cards' });
  const charts = h('div', { class: 'charts' });
  const states = h('div', { class: 'card' });
  fill(view.el, h('h1', {}, 'Overview'), health, h('h2', {}, 'Activity'), charts,
    h('h2', {}, 'Runs by state'), states);

  view.every(POLL_MS, async () => {
    const [c, bp, m] = await Promise.allSettled([
      get('/api/v1/cluster', view.signal), get('/api/v1/backpressure', view.signal),
      getText('/metrics', view.signal)]);
    if (view.signal.aborted) return;
    const cards = [];
    if (c.status === 'fulfilled') {
      const v = c.value;
      const up = v.members.filter((x) => x.reachable).length;
      const healthy = !!v.leader && up * 2 > v.members.length;
      cards.push(h('div', { class: `card stat ${healthy ? 'ok' : 'bad'}`, id: 'health' },
        h('div', { class: 'stat-label' }, 'Cluster'),
        h('div', { class: 'stat-value' }, healthy ? 'healthy' : 'degraded'),
        h('div', { class: 'muted' }, `${up}/${v.members.length} members reachable`)));
      cards.push(h('div', { class: 'card stat' }, h('div', { class: 'stat-label' }, 'Leader'),
        h('div', { class: 'stat-value' }, v.leader || 'none'), h('div', { class: 'muted' }, `term ${v.term}`)));
      cards.push(h('div', { class: 'card stat' }, h('div', { class: 'stat-label' }, 'Members'),
        h('ul', { class: 'plain' }, v.members.map((x) =>
          h('li', {}, h('span', { class: `dot ${x.reachable ? 'up' : 'down'}` }), `${x.id} `, h('span', { class: 'muted' }, x.role))))));
    } else cards.push(problem(c.reason, 'Cluster'));
    if (bp.status === 'fulfilled') {
      const p = bp.value;
      cards.push(h('div', { class: `card stat bp-${p.state}` }, h('div', { class: 'stat-label' }, 'Backpressure'),
        h('div', { class: 'stat-value', id: 'backpressure' }, p.state),
        h('div', { class: 'muted' }, `backlog ${p.backlog}/${p.max_backlog} · worker load ${(100 * p.worker_load).toFixed(0)}% · delay ${p.delay}`)));
    } else cards.push(problem(bp.reason, 'Backpressure'));
    fill(health, cards);

    if (m.status !== 'fulfilled') return fill(charts, problem(m.reason, 'Metrics'));
    history.push(sample(m.value));
    while (history.length > KEEP) history.shift();
    const s = series();
    fill(charts,
      svg(lineChart(s.runs, { title: 'Runs per second', unit: '/s' })),
      svg(lineChart(s.rate, { title: 'Success rate', unit: '%', max: 100, color: '#1e9e5a' })),
      svg(lineChart(s.late, { title: 'Trigger lateness (mean)', unit: ' ms', floor: 10, color: '#d9822b' })),
      svg(lineChart(s.p95, { title: 'Trigger lateness (p95 bound)', unit: ' ms', floor: 10, color: '#c23b3b' })));
    const last = history[history.length - 1];
    const order = ['success', 'running', 'dispatched', 'pending', 'retry_waiting', 'failed', 'timed_out', 'cancelled'];
    const entries = Object.entries(last.instances)
      .sort((a, b) => order.indexOf(a[0]) - order.indexOf(b[0]));
    fill(states, entries.length
      ? svg(stackedBar(entries.map(([k, v]) => [k, v, `fill-${k}`])))
      : h('p', { class: 'muted' }, 'No run counts yet'));
  });
}
