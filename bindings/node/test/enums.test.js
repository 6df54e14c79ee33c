'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { c10c } = require('./helpers.js');
const { DType, DeviceType, MemoryFormat, Device, dtypeName, toDType, dtypeItemsize, Tensor } = c10c;

test('DType and DeviceType are frozen enums with the library values', () => {
  assert.ok(Object.isFrozen(DType));
  assert.ok(Object.isFrozen(DeviceType));
  assert.throws(() => { 'use strict'; DType.FLOAT32 = 1; }, TypeError);
  assert.equal(DType.FLOAT32, 6);
  assert.equal(DType.INT64, 4);
  assert.equal(DType.BOOL, 11);
  assert.equal(DeviceType.CPU, 0);
  assert.equal(DeviceType.CUDA, 1);
  assert.equal(DeviceType.META, 14);
  assert.equal(MemoryFormat.CONTIGUOUS, 0);
  assert.equal(dtypeName(DType.FLOAT32), 'float32');
  assert.equal(dtypeName(DType.BFLOAT16), 'bfloat16');
  assert.equal(toDType('float'), DType.FLOAT32);
  assert.equal(toDType('int64'), DType.INT64);
  assert.equal(dtypeItemsize(DType.FLOAT64), 8);
  // Every dtype the library names round-trips by name.
  for (const [k, v] of Object.entries(DType)) {
    if (k === 'UNDEFINED') continue;
    assert.equal(toDType(dtypeName(v)), v, k);
  }
});

test('devices parse, print and compare', () => {
  assert.equal(String(Device.CPU), 'cpu');
  const d = Device.parse('cuda:1');
  assert.equal(d.type, DeviceType.CUDA);
  assert.equal(d.index, 1);
  assert.equal(String(d), 'cuda:1');
  assert.ok(Device.parse('cpu').equals(Device.CPU));
  assert.ok(!d.equals(Device.CPU));
  assert.throws(() => Device.parse('nonsense'), { name: 'C10cError' });
});

test('tensors report dtype and device', () => {
  const t = Tensor.empty([2], { dtype: DType.INT32 });
  assert.equal(t.dtype, DType.INT32);
  assert.equal(t.device.type, DeviceType.CPU);
  assert.equal(t.itemsize, 4);
  t.dispose();
  const m = Tensor.empty([2, 3], { dtype: 'float64', device: 'meta' });
  assert.equal(m.device.type, DeviceType.META);
  assert.equal(m.dtype, DType.FLOAT64);
  assert.throws(() => m.buffer(), { status: 'C10C_STATUS_UNSUPPORTED' });
  m.dispose();
});
