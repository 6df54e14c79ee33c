'use strict';
// Runs the conformance runner (fewer cycles: test.sh runs the full count separately).
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

test('conformance runner passes (20000 cycles)', () => {
  const r = spawnSync(process.execPath, [path.join(__dirname, '..', 'scripts', 'conformance.js')], {
    env: { ...process.env, C10C_CONFORMANCE_CYCLES: '20000' }, encoding: 'utf8',
  });
  assert.equal(r.status, 0, r.stdout + r.stderr);
  for (const g of ['views', 'errors', 'dlpack', 'release_on_other_thread', 'cycles']) {
    assert.match(r.stdout, new RegExp(`conformance node: ${g} (\\d+)/\\1\\b`));
  }
});
