// The BullMQ side of tools/bench/peers: one workload against a Redis on
// loopback, its figures as one JSON object on stdout. run.py drives it.
//
//   node bullmq_bench.js burst      --port P [--n 10000] [--lead 8] [--concurrency 100]
//   node bullmq_bench.js steady     --port P [--n 1000] [--duration 30] [--concurrency 100]
//   node bullmq_bench.js throughput --port P [--duration 20] [--backlog 20000] [--batch 1000] [--producers 2] [--concurrency 100]
//
// The producer (Queue, JobScheduler) runs on the main thread, the Worker on a
// worker thread, so each has a core the way aisched-load and aisched do. Jobs
// are no-ops, removed on completion (BullMQ's cheapest setting). A job's
// lateness is processedOn (the worker took it) - its due instant. Every wait is
// bounded; a hard deadline ends the process whatever happens.
'use strict';
const { Worker: Thread, isMainThread, parentPort, workerData } = require('node:worker_threads');
const { Queue, Worker } = require('bullmq');

function parseArgs(argv) {
  const o = { scenario: argv[0], port: 6379, n: 0, lead: 8, duration: 20, backlog: 20000,
              concurrency: 100, batch: 1000, producers: 2 };
  for (let i = 1; i < argv.length; i += 2) {
    const k = argv[i].replace(/^--/, '');
    if (!(k in o) || i + 1 >= argv.length) throw new Error(`unknown or incomplete option ${argv[i]}`);
    o[k] = Number(argv[i + 1]);
  }
  if (!['burst', 'steady', 'throughput'].includes(o.scenario))
    throw new Error('scenario: burst | steady | throughput');
  if (!o.n) o.n = o.scenario === 'burst' ? 10000 : 1000;
  return o;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const jobOpts = { removeOnComplete: true, removeOnFail: true };

// Nearest-rank percentiles, as aisched-load computes them.
function summarize(xs) {
  if (xs.length === 0) return { p50_ms: 0, p90_ms: 0, p99_ms: 0, max_ms: 0, n: 0 };
  xs = Float64Array.from(xs).sort();
  const at = (q) => xs[Math.min(xs.length - 1, Math.floor(q * xs.length))];
  return { p50_ms: at(0.5), p90_ms: at(0.9), p99_ms: at(0.99), max_ms: xs[xs.length - 1],
           n: xs.length };
}

// -- the worker thread: a BullMQ Worker that records what it completed --------

async function workerThread({ queueName, port, concurrency, keep }) {
  const records = [];
  let done = 0;
  let warm = 0;
  const w = new Worker(queueName, async () => {}, {
    connection: { host: '127.0.0.1', port }, concurrency });
  w.on('completed', (job) => {
    if (job.name === 'warmup') return void ++warm;
    ++done;
    // A scheduler's job id is repeat:<scheduler>:<due ms>; a delayed job is due
    // at timestamp + delay.
    if (keep) records.push([job.id, job.timestamp + (job.delay || 0), job.processedOn, job.finishedOn]);
  });
  w.on('error', (e) => console.error('worker error:', e.message));
  await w.waitUntilReady();
  parentPort.postMessage({ ready: true });
  const tick = setInterval(() => parentPort.postMessage({ done, warm }), 50);
  parentPort.on('message', async (m) => {
    if (m !== 'stop') return;
    clearInterval(tick);
    await w.close();
    parentPort.postMessage({ done, records });
    parentPort.close();
  });
}

// Starts the worker thread; resolves once its Worker is connected.
function startWorker(o, queueName, keep) {
  const t = new Thread(__filename, {
    workerData: { queueName, port: o.port, concurrency: o.concurrency, keep } });
  const state = { done: 0, warm: 0 };
  let onFinal;
  const final = new Promise((r) => (onFinal = r));
  const ready = new Promise((resolve, reject) => {
    t.on('message', (m) => {
      if (m.ready) resolve();
      if (typeof m.done === 'number') state.done = m.done;
      if (typeof m.warm === 'number') state.warm = m.warm;
      if (m.records) onFinal(m);
    });
    t.on('error', reject);
  });
  state.stop = async (timeoutMs = 30000) => {
    t.postMessage('stop');
    const m = await Promise.race([final, sleep(timeoutMs).then(() => ({ done: state.done, records: [] }))]);
    await t.terminate();
    return m;
  };
  return ready.then(() => state);
}

// -- the three workloads -------------------------------------------------------

async function burst(o, queue, worker) {
  const due = (Math.floor(Date.now() / 1000) + o.lead + 1) * 1000;
  for (let i = 0; i < o.n; i += o.batch) {
    const jobs = [];
    for (let j = i; j < Math.min(o.n, i + o.batch); ++j)
      jobs.push({ name: 'noop', data: { j }, opts: { ...jobOpts, delay: due - Date.now() } });
    await queue.addBulk(jobs);
  }
  if (Date.now() >= due) console.error('warning: adding took longer than --lead; jobs ran late');
  const deadline = Math.max(Date.now(), due) + 120000;
  while (worker.done < o.n && Date.now() < deadline) await sleep(50);
  const { records } = await worker.stop();
  const started = records.map((r) => r[2] - due);
  return { scenario: 'burst', jobs: o.n, runs: records.length,
           start_lateness: summarize(started),
           all_started_after_ms: records.length ? Math.max(...started) : -1,
           all_done_after_ms: records.length ? Math.max(...records.map((r) => r[3] - due)) : -1 };
}

async function steady(o, queue, worker) {
  // Every scheduler's first instant is the same whole second, then one a second,
  // as aisched's `@every 1s` tasks fire: 1 000 runs due at each second.
  const startDate = (Math.floor(Date.now() / 1000) + 3) * 1000;
  const ids = [];
  for (let i = 0; i < o.n; i += 100) {
    const part = [];
    for (let j = i; j < Math.min(o.n, i + 100); ++j) {
      ids.push(`s${j}`);
      part.push(queue.upsertJobScheduler(`s${j}`, { every: 1000, startDate },
                                         { name: 'noop', data: {}, opts: jobOpts }));
    }
    await Promise.all(part);
  }
  // The window: whole seconds from the first instant every scheduler is armed for.
  const start = Math.max(startDate, (Math.floor(Date.now() / 1000) + 1) * 1000);
  const stop = start + o.duration * 1000;
  while (Date.now() < stop + 1000) await sleep(100);
  for (let i = 0; i < ids.length; i += 100)
    await Promise.all(ids.slice(i, i + 100).map((id) => queue.removeJobScheduler(id)));
  await sleep(2000);  // let the last runs finish
  const { records } = await worker.stop();
  const seen = new Map();
  const late = [];
  for (const [id, , processedOn] of records) {
    const m = /^repeat:(.+):(\d+)$/.exec(String(id));
    if (!m) continue;
    const due = Number(m[2]);
    if (due < start || due >= stop) continue;
    const key = `${m[1]}:${due}`;
    seen.set(key, (seen.get(key) || 0) + 1);
    late.push(processedOn - due);
  }
  let duplicates = 0;
  for (const c of seen.values()) duplicates += c - 1;
  const expected = o.n * o.duration;
  return { scenario: 'steady', schedulers: o.n, window_s: o.duration, expected_runs: expected,
           observed_runs: seen.size, duplicates, missed: Math.max(0, expected - seen.size),
           start_lateness: summarize(late) };
}

async function throughput(o, queue, worker) {
  // Producers keep at most --backlog jobs added and not yet completed, adding
  // --batch at a time (addBulk); the rate is jobs completed in the window.
  let added = 0;
  let stopping = false;
  const t0 = Date.now();
  const producer = async () => {
    while (!stopping) {
      if (added - worker.done + o.batch > o.backlog) { await sleep(1); continue; }
      added += o.batch;
      const jobs = [];
      for (let j = 0; j < o.batch; ++j) jobs.push({ name: 'noop', data: {}, opts: jobOpts });
      await queue.addBulk(jobs);
    }
  };
  const producers = Array.from({ length: o.producers }, producer);
  const startDone = worker.done;
  while (Date.now() - t0 < o.duration * 1000) await sleep(20);
  const window = (Date.now() - t0) / 1000;
  const completed = worker.done - startDone;
  stopping = true;
  await Promise.all(producers);
  const drainDeadline = Date.now() + 60000;
  while (worker.done < added && Date.now() < drainDeadline) await sleep(50);
  const allDone = worker.done >= added;
  await worker.stop();
  return { scenario: 'throughput', window_s: window, backlog: o.backlog, batch: o.batch,
           added, completed, jobs_per_s: completed / window, all_done: allDone };
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const hardMs = (o.lead + o.duration + 240) * 1000;
  setTimeout(() => { console.error('bullmq_bench: hard deadline'); process.exit(3); }, hardMs).unref();
  const queueName = `peers-${o.scenario}-${process.pid}-${Date.now()}`;
  const queue = new Queue(queueName, { connection: { host: '127.0.0.1', port: o.port } });
  await queue.waitUntilReady();
  const worker = await startWorker(o, queueName, o.scenario !== 'throughput');
  // Warm-up, not measured: the Worker is connected and has run jobs before the
  // workload starts, as aisched's built-in worker has registered.
  await queue.addBulk(Array.from({ length: 1000 }, () => ({ name: 'warmup', data: {}, opts: jobOpts })));
  const warmDeadline = Date.now() + 30000;
  while (worker.warm < 1000 && Date.now() < warmDeadline) await sleep(20);
  if (worker.warm < 1000) console.error(`warning: warm-up: ${worker.warm} of 1000 jobs in 30 s`);
  const run = { burst, steady, throughput }[o.scenario];
  const out = await run(o, queue, worker);
  out.bullmq_concurrency = o.concurrency;
  await queue.obliterate({ force: true });
  await queue.close();
  process.stdout.write(JSON.stringify(out) + '\n');
  process.exit(out.all_done === false ? 1 : 0);
}

if (isMainThread) {
  main().catch((e) => { console.error('bullmq_bench:', e && e.stack ? e.stack : e); process.exit(2); });
} else {
  workerThread(workerData);
}
