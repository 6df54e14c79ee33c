#!/usr/bin/env node
'use strict';
/*
 * The bindings' conformance suite (bindings/conformance/cases.json) run through this binding's
 * public API. Prints one line per case group ("conformance node: views 12/12") and exits 1 on
 * any miss. Run with `node --expose-gc` (the cycles group calls gc() before each RSS reading).
 * C10C_CONFORMANCE_CYCLES lowers the cycle count for quick local runs.
 */

const fs = require('node:fs');
const { spawnSync } = require('node:child_process');

// V8 flags for the RSS measurement: gc() available, a young generation capped at 1 MiB and no
// V8 background threads, so that what V8's own heap sizing and its threads' malloc arenas do
// is not counted as the library's growth (README.md, "Conformance and RSS").
const V8_FLAGS = ['--expose-gc', '--max-semi-space-size=1', '--single-threaded'];
if (!process.env.C10C_CONFORMANCE_CHILD) {
  const r = spawnSync(process.execPath, [...V8_FLAGS, __filename, ...process.argv.slice(2)], {
    stdio: 'inherit', env: { ...process.env, C10C_CONFORMANCE_CHILD: '1' },
  });
  process.exit(r.status === null ? 1 : r.status);
}
const path = require('node:path');
const c10c = require('../lib/index.js');

const { Tensor, C10cError, allocatorStats, toDType, typedArrayClass } = c10c;
const { koffi, types } = c10c.ffi;

const CASES = path.resolve(__dirname, '..', '..', 'conformance', 'cases.json');
const cases = JSON.parse(fs.readFileSync(CASES, 'utf8'));

let failed = false;
function report(group, pass, total, notes) {
  console.log(`conformance node: ${group} ${pass}/${total}`);
  if (pass !== total) failed = true;
  for (const n of notes) console.log(`  ${n}`);
}

function applyOp(t, op, a) {
  switch (op) {
    case 'narrow': return t.narrow(a.dim, a.start, a.length);
    case 'transpose': return t.transpose(a.dim0, a.dim1);
    case 'select': return t.select(a.dim, a.index);
    case 'permute': return t.permute(a.dims);
    case 'view': return t.view(a.shape);
    case 'reshape': return t.reshape(a.shape);
    case 'unsqueeze': return t.unsqueeze(a.dim);
    case 'squeeze': return t.squeeze(a.dims);
    case 'expand': return t.expand(a.sizes);
    case 'slice': return t.slice(a.dim, a.start, a.end, a.step);
    case 'as_strided': return t.asStrided(a.sizes, a.strides, a.storage_offset);
    case 'diagonal': return t.diagonal(a.offset, a.dim1, a.dim2);
    case 'unfold': return t.unfold(a.dim, a.size, a.step);
    case 'flatten': return t.flatten(a.start_dim, a.end_dim);
    case 'unflatten': return t.unflatten(a.dim, a.sizes);
    case 'movedim': return t.movedim(a.source, a.destination);
    default: throw new Error(`conformance: unknown op ${op}`);
  }
}

function same(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}

function liveCpuAllocations() {
  return Number(allocatorStats(c10c.DeviceType.CPU).allocation[0].current);
}

function rss() {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync('/proc/self/status', 'utf8'));
    if (m) return Number(m[1]) * 1024;
  } catch (_) { /* not Linux */ }
  return process.memoryUsage.rss();
}

function collect() {
  if (typeof global.gc === 'function') { global.gc(); global.gc(); }
}

// ---- views ----
function views() {
  const notes = [];
  let pass = 0;
  for (const c of cases.views) {
    const base = Tensor.empty(c.base.shape, { dtype: c.base.dtype });
    try {
      const v = applyOp(base, c.op, c.args);
      const got = { sizes: v.sizes, strides: v.strides, storage_offset: v.storageOffset };
      const want = { sizes: c.sizes, strides: c.strides, storage_offset: c.storage_offset };
      v.dispose();
      if (same(got, want)) pass++;
      else notes.push(`${c.op} ${JSON.stringify(c.args)}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
    } catch (e) {
      notes.push(`${c.op} ${JSON.stringify(c.args)}: threw ${e.status || ''} ${e.message}`);
    } finally {
      base.dispose();
    }
  }
  report('views', pass, cases.views.length, notes);
}

// ---- errors ----
function errors() {
  const notes = [];
  let pass = 0;
  for (const c of cases.errors) {
    const base = Tensor.empty(c.base.shape, { dtype: c.base.dtype });
    try {
      const v = applyOp(base, c.op, c.args);
      v.dispose();
      notes.push(`${c.op} ${JSON.stringify(c.args)}: no error`);
    } catch (e) {
      if (e instanceof C10cError && e.status === c.status && e.message === c.message) pass++;
      else notes.push(`${c.op} ${JSON.stringify(c.args)}: got ${e.status} ${JSON.stringify(e.message)}, want ${c.status} ${JSON.stringify(c.message)}`);
    } finally {
      base.dispose();
    }
  }
  report('errors', pass, cases.errors.length, notes);
}

// ---- dlpack ----
function dlpack() {
  const c = cases.dlpack;
  const notes = [];
  const checks = [];
  const ok = (name, cond, detail) => { checks.push(cond); if (!cond) notes.push(`${name}${detail ? ': ' + detail : ''}`); };
  const live0 = liveCpuAllocations();
  const dtype = toDType(c.dtype);
  const T = typedArrayClass(dtype);
  const src = Tensor.fromTypedArray(T.from(c.values), c.shape, { dtype });
  const exported = src.toDLPack();
  // Count the export's deleter calls: interpose a JS function (run synchronously here, since the
  // last release below happens on this thread) that calls the library's deleter.
  const offset = koffi.offsetof(types.DLManagedTensorVersioned, 'deleter');
  const original = koffi.decode(exported.raw, offset, 'void *');
  let deleterCalls = 0;
  const proto = koffi.proto('void conformance_dlpack_deleter(void *)');
  const cb = koffi.register((p) => {
    deleterCalls++;
    koffi.call(original, types.DLManagedTensorVersioned_deleter_fn, p);
  }, koffi.pointer(proto));
  koffi.encode(exported.raw, offset, 'void *', cb);
  const exportData = exported.dataPtr;
  ok('export shape', same(exported.shape, c.shape), JSON.stringify(exported.shape));
  const imported = Tensor.fromDLPack(exported);
  ok('export consumed by import', exported.disposed);
  ok('import data pointer is the export\'s', imported.dataPtr === exportData, `${imported.dataPtr} vs ${exportData}`);
  ok('import sizes', same(imported.sizes, c.shape), JSON.stringify(imported.sizes));
  ok('import values', same(imported.toArray(), c.values), JSON.stringify(imported.toArray()));
  src.dispose();
  ok('deleter not run while the import lives', deleterCalls === 0, `${deleterCalls} calls`);
  const view = imported.transpose(0, 1);
  imported.dispose();
  ok('deleter not run while a view lives', deleterCalls === 0, `${deleterCalls} calls`);
  view.dispose();
  ok('deleter ran exactly once after the last release', deleterCalls === 1, `${deleterCalls} calls`);
  // Unregister the interposed callback only once it ran (the struct no longer points to it).
  if (deleterCalls === 1) koffi.unregister(cb);
  ok('CPU allocations back to start', liveCpuAllocations() === live0, `${liveCpuAllocations()} vs ${live0}`);
  report('dlpack', checks.filter(Boolean).length, checks.length, notes);
}

// ---- release_on_other_thread ----
async function releaseOnOtherThread() {
  const c = cases.release_on_other_thread;
  const notes = [];
  const checks = [];
  const ok = (name, cond, detail) => { checks.push(cond); if (!cond) notes.push(`${name}${detail ? ': ' + detail : ''}`); };
  // koffi's async calls run on a worker thread: show it with gettid().
  try {
    const gettid = koffi.load('libc.so.6').func('int gettid()');
    const workerTid = await new Promise((res, rej) => gettid.async((e, r) => (e ? rej(e) : res(r))));
    ok('async calls run on another OS thread', workerTid !== gettid(), `${workerTid}`);
  } catch (e) { /* no gettid in this libc: skip that check */ }
  const live0 = liveCpuAllocations();
  const dtype = toDType(c.dtype);
  const tensors = [];
  for (let i = 0; i < c.count; i++) tensors.push(Tensor.empty(c.shape, { dtype }));
  ok('allocations made', liveCpuAllocations() === live0 + c.count, `${liveCpuAllocations() - live0}`);
  let errs = 0;
  const BATCH = 128; // koffi queues at most 256 asynchronous calls
  for (let i = 0; i < tensors.length; i += BATCH) {
    const rs = await Promise.allSettled(tensors.slice(i, i + BATCH).map((t) => t.disposeAsync()));
    errs += rs.filter((r) => r.status === 'rejected').length;
  }
  ok('no error', errs === 0, `${errs} errors`);
  ok('all disposed', tensors.every((t) => t.disposed));
  ok('CPU allocations back to start', liveCpuAllocations() === live0, `${liveCpuAllocations()} vs ${live0}`);
  report('release_on_other_thread', checks.filter(Boolean).length, checks.length, notes);
}

// ---- cycles ----
function cycles() {
  const c = cases.cycles;
  const count = process.env.C10C_CONFORMANCE_CYCLES ? Number(process.env.C10C_CONFORMANCE_CYCLES) : c.count;
  const shape = c.base.shape;
  const opts = { dtype: toDType(c.base.dtype) };
  const { op, args } = c.view;
  const notes = [];
  if (typeof global.gc !== 'function') notes.push('run with node --expose-gc: without gc() the JS heap counts too');
  const run = (n) => {
    for (let i = 0; i < n; i++) {
      const t = Tensor.empty(shape, opts);
      const v = applyOp(t, op, args);
      v.dispose();
      t.dispose();
    }
  };
  const live0 = liveCpuAllocations();
  run(c.warmup);
  collect();
  const before = rss();
  const heapBefore = process.memoryUsage().heapUsed;
  const t0 = process.hrtime.bigint();
  run(count);
  const secs = Number(process.hrtime.bigint() - t0) / 1e9;
  collect();
  const after = rss();
  const heapAfter = process.memoryUsage().heapUsed;
  const growth = after - before;
  const passRss = growth < c.rss_growth_limit_bytes;
  const passLive = liveCpuAllocations() === live0;
  notes.push(`node ${process.execArgv.join(' ')}: ${count} cycles in ${secs.toFixed(2)} s; VmRSS growth ${growth} bytes (limit ${c.rss_growth_limit_bytes}); JS heap growth ${heapAfter - heapBefore} bytes`);
  if (!passLive) notes.push(`CPU allocations ${liveCpuAllocations()} vs ${live0} at start`);
  console.log(`conformance node: cycles ${passRss && passLive ? 1 : 0}/1`);
  if (!(passRss && passLive)) failed = true;
  for (const n of notes) console.log(`  ${n}`);
}

async function main() {
  views();
  errors();
  dlpack();
  await releaseOnOtherThread();
  cycles();
  process.exitCode = failed ? 1 : 0;
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
