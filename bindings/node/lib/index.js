'use strict';
/**
 * The idiomatic Node.js layer of libc10c: tensors, storages, dtypes, devices, views and DLPack
 * over the generated koffi declarations of lib/ffi.js.
 *
 * Ownership: every Tensor, Storage and DLPackTensor owns one reference to a library object.
 * Release it with dispose() (or `using`, through Symbol.dispose where the runtime has it); a
 * FinalizationRegistry releases what was not disposed once the JS object is garbage collected.
 * dispose() is idempotent; any other use after it throws a DisposedError.
 *
 * Threads: calls run on the JS thread (koffi's synchronous calls), so the library's thread-local
 * last error is read right after the failing call. Tensor#disposeAsync() releases a reference on
 * a koffi worker thread (refcounts are atomic). Changing one tensor's metadata from two threads at
 * once is the caller's race, as in c10.
 * @module c10c
 */

const ffi = require('./ffi.js');

const { koffi, types, enums } = ffi;

// ---- loading ----------------------------------------------------------------------------------

/** The library path: $C10C_LIBRARY, else the SONAME for the system's search. */
const LIBRARY_PATH = process.env.C10C_LIBRARY || 'libc10c.so.1';
const handle = ffi.open(LIBRARY_PATH);
/** The raw C functions (lazily declared), by C name. */
const C = handle.fn;

// The hot-path functions, looked up once.
const c_empty = C.c10c_tensor_empty;
const c_release = C.c10c_tensor_release;
const c_retain = C.c10c_tensor_retain;
const c_last_message = C.c10c_last_error_message;
const c_status_name = C.c10c_status_name;

// ---- errors -----------------------------------------------------------------------------------

/**
 * An error the library reported: `status` is the status code's C name
 * ("C10C_STATUS_INDEX_OUT_OF_RANGE"), `code` its number, `message` the library's message
 * (c10c_last_error_message) word for word.
 */
class C10cError extends Error {
  /**
   * @param {string} status the C name of the status ("C10C_STATUS_ERROR")
   * @param {string} message the message
   * @param {number} [code] the numeric status
   */
  constructor(status, message, code) {
    super(message);
    this.name = 'C10cError';
    /** @type {string} */
    this.status = status;
    /** @type {number} */
    this.code = code === undefined ? (enums.c10c_status_code[status] ?? -1) : code;
  }
}

/** A Tensor, Storage or DLPackTensor used after dispose(): a C10cError with status C10C_STATUS_NULL_POINTER. */
class DisposedError extends C10cError {
  /** @param {string} what the class name */
  constructor(what) {
    super('C10C_STATUS_NULL_POINTER', `${what} used after dispose()`, enums.c10c_status_code.C10C_STATUS_NULL_POINTER);
    this.name = 'DisposedError';
  }
}

/** The name of a status code as its C enum constant spells it ("C10C_STATUS_OK"). */
function statusName(code) {
  return 'C10C_STATUS_' + c_status_name(code);
}

/** Builds the C10cError of a failed call from the thread's last error (call right after it). */
function lastError(code) {
  const msg = c_last_message();
  return new C10cError(statusName(code), msg == null ? '' : msg, code);
}

function check(code) {
  if (code !== 0) throw lastError(code);
}

// ---- enums ------------------------------------------------------------------------------------

function stripped(values, prefix, skip) {
  const o = {};
  for (const [k, v] of Object.entries(values)) {
    const n = k.slice(prefix.length);
    if (!skip.includes(n)) o[n] = v;
  }
  return Object.freeze(o);
}

/** dtypes (c10::ScalarType values, frozen for ABI 1.x): DType.FLOAT32 === 6. */
const DType = stripped(enums.c10c_dtype_value, 'C10C_DTYPE_', ['COUNT']);
/** Device types (c10::DeviceType): DeviceType.CPU === 0, DeviceType.CUDA === 1. */
const DeviceType = stripped(enums.c10c_device_type_value, 'C10C_DEVICE_TYPE_', ['COUNT']);
/** Memory formats: MemoryFormat.CONTIGUOUS === 0. */
const MemoryFormat = stripped(enums.c10c_memory_format_value, 'C10C_MEMORY_FORMAT_', ['COUNT']);
/** Layouts: Layout.STRIDED === 0. */
const Layout = stripped(enums.c10c_layout_value, 'C10C_LAYOUT_', ['COUNT']);
/** Status codes by short name: Status.OK === 0, Status.INDEX_OUT_OF_RANGE === -3. */
const Status = stripped(enums.c10c_status_code, 'C10C_STATUS_', ['MIN']);

const DTYPE_NAMES = new Map();
/**
 * A dtype from its torch name or legacy alias ("float32", "float"), or the number itself.
 * @param {number|string} dtype
 * @returns {number}
 */
function toDType(dtype) {
  if (typeof dtype === 'number') return dtype;
  let v = DTYPE_NAMES.get(dtype);
  if (v === undefined) {
    const out = [0];
    check(C.c10c_dtype_from_name(out, String(dtype)));
    v = out[0];
    DTYPE_NAMES.set(dtype, v);
  }
  return v;
}
/** torch's name of a dtype ("float32"). */
function dtypeName(dtype) {
  const n = C.c10c_dtype_name(toDType(dtype));
  if (n == null) throw lastError(C.c10c_last_error_status());
  return n;
}
/** Bytes per element of a dtype. */
function dtypeItemsize(dtype) {
  return Number(C.c10c_dtype_itemsize(toDType(dtype)));
}

// ---- devices ----------------------------------------------------------------------------------

/** A device: a type (DeviceType) and an index (-1: none, the current one). Immutable. */
class Device {
  /**
   * @param {number} type a DeviceType value
   * @param {number} [index=-1] the device index, -1 for none
   */
  constructor(type, index = -1) {
    /** @type {number} */
    this.type = type;
    /** @type {number} */
    this.index = index;
    Object.freeze(this);
  }
  /** Parses "cpu", "cuda:1", ... (c10c_device_from_string). */
  static parse(str) {
    const out = [{}];
    check(C.c10c_device_from_string(out, String(str)));
    return new Device(out[0].type, out[0].index);
  }
  /** c10's spelling: "cpu", "cuda:0". */
  toString() {
    const buf = Buffer.alloc(enums.c10c_device_index_limit.C10C_DEVICE_STRING_MAX);
    check(C.c10c_device_to_string(buf, buf.length, this));
    return buf.toString('utf8', 0, buf.indexOf(0));
  }
  /** Whether two devices are equal (c10c_device_equal). */
  equals(other) {
    return C.c10c_device_equal(this, toDevice(other));
  }
}
/** The CPU device (type CPU, index -1). */
Device.CPU = new Device(DeviceType.CPU, -1);

function toDevice(d) {
  if (d === undefined || d === null) return Device.CPU;
  if (d instanceof Device) return d;
  if (typeof d === 'string') return Device.parse(d);
  if (typeof d === 'number') return new Device(d, -1);
  return new Device(d.type, d.index === undefined ? -1 : d.index);
}

// ---- allocator statistics ---------------------------------------------------------------------

/**
 * The statistics of the allocator installed for a device type (c10c_allocator_get_stats):
 * `allocation[0].current` is the number of live allocations.
 * @param {number} [deviceType=DeviceType.CPU]
 * @returns {object} a c10c_memory_stats as a plain object
 */
function allocatorStats(deviceType = DeviceType.CPU) {
  const a = new BigUint64Array(1);
  check(C.c10c_allocator_get(a, deviceType));
  try {
    const stats = { struct_size: koffi.sizeof(types.c10c_memory_stats) };
    check(C.c10c_allocator_get_stats(stats, a[0]));
    return stats;
  } finally {
    C.c10c_allocator_release(a[0]);
  }
}

// ---- shared helpers ---------------------------------------------------------------------------

const OUT = new BigUint64Array(1); // the out-slot of synchronous calls (the JS thread only)
const HAS_DISPOSE = typeof Symbol.dispose === 'symbol';

function int64s(a) {
  if (a instanceof BigInt64Array) return a;
  if (!Array.isArray(a) && !ArrayBuffer.isView(a)) throw new TypeError('expected an array of integers');
  return a;
}

// A retained tensor reference per zero-copy ArrayBuffer, released when the buffer is collected.
const bufferKeepAlive = new FinalizationRegistry((ptr) => c_release(ptr));
// Storages retained for their buffers.
const storageBufferKeepAlive = new FinalizationRegistry((ptr) => C.c10c_storage_release(ptr));

const TYPED = new Map([
  [DType.UINT8, Uint8Array], [DType.INT8, Int8Array], [DType.INT16, Int16Array],
  [DType.INT32, Int32Array], [DType.INT64, BigInt64Array], [DType.FLOAT32, Float32Array],
  [DType.FLOAT64, Float64Array], [DType.BOOL, Uint8Array], [DType.UINT16, Uint16Array],
  [DType.UINT32, Uint32Array], [DType.UINT64, BigUint64Array], [DType.FLOAT16, Uint16Array],
  [DType.BFLOAT16, Uint16Array], [DType.COMPLEX64, Float32Array], [DType.COMPLEX128, Float64Array],
]);
const FROM_TYPED = new Map([
  [Uint8Array, DType.UINT8], [Uint8ClampedArray, DType.UINT8], [Int8Array, DType.INT8],
  [Int16Array, DType.INT16], [Int32Array, DType.INT32], [BigInt64Array, DType.INT64],
  [Float32Array, DType.FLOAT32], [Float64Array, DType.FLOAT64], [Uint16Array, DType.UINT16],
  [Uint32Array, DType.UINT32], [BigUint64Array, DType.UINT64],
]);

/** The TypedArray class that views elements of a dtype (Uint16Array for float16/bfloat16, the
 * real type for complex: two per element); undefined for the others. */
function typedArrayClass(dtype) {
  return TYPED.get(toDType(dtype));
}

/** One element of a dtype as its native bytes (for fill/full). */
function encodeScalar(value, dtype) {
  const T = TYPED.get(dtype);
  if (!T || dtype === DType.FLOAT16 || dtype === DType.BFLOAT16 || dtype === DType.COMPLEX64 || dtype === DType.COMPLEX128)
    throw new C10cError('C10C_STATUS_UNSUPPORTED', `fill with a JS number is not supported for dtype ${dtypeName(dtype)}; pass a Buffer holding one element`);
  const a = new T(1);
  a[0] = (T === BigInt64Array || T === BigUint64Array) ? BigInt(value) : (typeof value === 'boolean' ? Number(value) : value);
  return a;
}

function valueBytes(value, dtype) {
  if (value === null || value === undefined) return null;
  if (Buffer.isBuffer(value) || ArrayBuffer.isView(value)) return value;
  return encodeScalar(value, dtype);
}

/** The data address and the span (in elements) the tensor's elements reach, CPU only; null when
 * it has no elements. Throws the library's error when the storage no longer holds them. */
function spanOf(p) {
  const d = C.c10c_tensor_device(p);
  if (d.type !== DeviceType.CPU) {
    throw new C10cError('C10C_STATUS_UNSUPPORTED', `data access: the tensor is on ${new Device(d.type, d.index)}, not CPU`);
  }
  const n = Number(C.c10c_tensor_dim(p));
  const itemsize = Number(C.c10c_tensor_itemsize(p));
  let span = 1;
  if (n > 0) {
    const sz = koffi.decode(C.c10c_tensor_sizes(p), 'int64_t', n);
    const st = koffi.decode(C.c10c_tensor_strides(p), 'int64_t', n);
    for (let i = 0; i < n; i++) {
      if (sz[i] === 0n) return null;
      span += Number((sz[i] - 1n) * st[i]);
    }
  }
  C.c10c_clear_last_error();
  const data = C.c10c_tensor_data(p);
  if (!data) {
    const code = C.c10c_last_error_status();
    if (code !== 0) throw lastError(code);
    return null;
  }
  return { data, span, itemsize };
}

// ---- Tensor -----------------------------------------------------------------------------------

const tensorRegistry = new FinalizationRegistry((ptr) => c_release(ptr));
const WRAP = Symbol('wrap');

/**
 * A strided tensor (a reference to a c10c_tensor). Views share their base's storage.
 * Make them with Tensor.empty/zeros/full/fromTypedArray/fromDLPack/fromStorage.
 */
class Tensor {
  /** @private */
  constructor(token, ptr) {
    if (token !== WRAP) throw new TypeError('use Tensor.empty(), Tensor.zeros(), Tensor.fromTypedArray(), ...');
    /** @private */
    this._ptr = ptr;
    tensorRegistry.register(this, ptr, this);
  }

  /** Wraps a new reference (takes it over). @private */
  static _adopt(ptr) {
    return new Tensor(WRAP, ptr);
  }

  /**
   * Wraps a raw c10c_tensor pointer (a BigInt), taking over the reference the caller owns.
   * @param {bigint} ptr
   */
  static fromRawOwned(ptr) {
    if (!ptr) throw new C10cError('C10C_STATUS_NULL_POINTER', 'Tensor.fromRawOwned: NULL pointer');
    return new Tensor(WRAP, BigInt(ptr));
  }

  /** The raw c10c_tensor pointer (a BigInt, borrowed: valid while this Tensor is not disposed). */
  get raw() {
    const p = this._ptr;
    if (!p) throw new DisposedError('Tensor');
    return p;
  }

  /** Whether dispose() was called. */
  get disposed() {
    return !this._ptr;
  }

  /** Releases this reference now (idempotent). */
  dispose() {
    const p = this._ptr;
    if (p) {
      this._ptr = 0n;
      tensorRegistry.unregister(this);
      c_release(p);
    }
  }

  /**
   * Releases this reference on a koffi worker thread (another OS thread); the Tensor is disposed
   * at once. Resolves when the release ran.
   * @returns {Promise<void>}
   */
  disposeAsync() {
    const p = this._ptr;
    if (!p) return Promise.resolve();
    this._ptr = 0n;
    tensorRegistry.unregister(this);
    return new Promise((resolve, reject) => {
      c_release.async(p, (err) => (err ? reject(err) : resolve()));
    });
  }

  // -- creation --

  /**
   * A new tensor with uninitialized elements (c10c_tensor_empty).
   * @param {number[]} shape
   * @param {{dtype?: number|string, device?: Device|string, memoryFormat?: number}} [options]
   */
  static empty(shape, options) {
    let dtype = DType.FLOAT32, device = Device.CPU, mf = 0;
    if (options !== undefined) {
      if (options.dtype !== undefined) dtype = toDType(options.dtype);
      if (options.device !== undefined) device = toDevice(options.device);
      if (options.memoryFormat !== undefined) mf = options.memoryFormat;
    }
    const rc = c_empty(OUT, int64s(shape), shape.length, dtype, device, mf);
    if (rc !== 0) throw lastError(rc);
    return new Tensor(WRAP, OUT[0]);
  }

  /**
   * A new tensor with every element set to value (c10c_tensor_full): a number/bigint/boolean
   * or a Buffer/TypedArray holding one element's bytes.
   */
  static full(shape, value, options = {}) {
    const dtype = options.dtype === undefined ? DType.FLOAT32 : toDType(options.dtype);
    const device = toDevice(options.device);
    const bytes = valueBytes(value, dtype);
    if (bytes === null) throw new TypeError('Tensor.full: value is required (use Tensor.zeros)');
    check(C.c10c_tensor_full(OUT, int64s(shape), shape.length, dtype, device, options.memoryFormat || 0, bytes));
    return new Tensor(WRAP, OUT[0]);
  }

  /** A new tensor of zeros (c10c_tensor_full with a NULL value). */
  static zeros(shape, options = {}) {
    const dtype = options.dtype === undefined ? DType.FLOAT32 : toDType(options.dtype);
    check(C.c10c_tensor_full(OUT, int64s(shape), shape.length, dtype, toDevice(options.device), options.memoryFormat || 0, null));
    return new Tensor(WRAP, OUT[0]);
  }

  /** A new tensor with the given sizes and strides (c10c_tensor_empty_strided). */
  static emptyStrided(sizes, strides, options = {}) {
    if (sizes.length !== strides.length) throw new TypeError('emptyStrided: sizes and strides differ in length');
    const dtype = options.dtype === undefined ? DType.FLOAT32 : toDType(options.dtype);
    check(C.c10c_tensor_empty_strided(OUT, int64s(sizes), int64s(strides), sizes.length, dtype, toDevice(options.device)));
    return new Tensor(WRAP, OUT[0]);
  }

  /**
   * A new CPU tensor holding a copy of a TypedArray's elements (dtype from the array's type,
   * or options.dtype with the same item size), shaped as `shape` (default: 1-D).
   * @param {ArrayBufferView} array
   * @param {number[]} [shape]
   * @param {{dtype?: number|string}} [options]
   */
  static fromTypedArray(array, shape, options = {}) {
    if (!ArrayBuffer.isView(array) || array instanceof DataView) throw new TypeError('fromTypedArray: expected a TypedArray');
    let dtype = options.dtype === undefined ? FROM_TYPED.get(array.constructor) : toDType(options.dtype);
    if (dtype === undefined) throw new TypeError(`fromTypedArray: no dtype for ${array.constructor.name}`);
    const dims = shape === undefined ? [array.length] : shape;
    const t = Tensor.empty(dims, { dtype });
    try {
      const nbytes = t.nbytes;
      if (nbytes !== array.byteLength) {
        throw new C10cError('C10C_STATUS_INVALID_ARGUMENT', `fromTypedArray: ${array.byteLength} bytes given, shape [${dims.join(', ')}] of ${dtypeName(dtype)} holds ${nbytes}`);
      }
      const r = nbytes > 0 ? spanOf(t._ptr) : null;
      // A view without a keep-alive reference: t lives through the copy, the view is dropped.
      if (r !== null) new Uint8Array(koffi.view(r.data, nbytes)).set(new Uint8Array(array.buffer, array.byteOffset, array.byteLength));
    } catch (e) {
      t.dispose();
      throw e;
    }
    return t;
  }

  /**
   * A tensor over a storage (c10c_tensor_new_from_storage; sizes, strides and offset count
   * elements).
   */
  static fromStorage(storage, sizes, strides, storageOffset = 0, dtype = DType.FLOAT32) {
    if (sizes.length !== strides.length) throw new TypeError('fromStorage: sizes and strides differ in length');
    check(C.c10c_tensor_new_from_storage(OUT, storage.raw, int64s(sizes), int64s(strides), sizes.length, storageOffset, toDType(dtype)));
    return new Tensor(WRAP, OUT[0]);
  }

  /** A new uninitialized tensor shaped as this one (c10c_tensor_empty_like). */
  emptyLike(options = {}) {
    const dtype = options.dtype === undefined ? this.dtype : toDType(options.dtype);
    const device = options.device === undefined ? this.device : toDevice(options.device);
    check(C.c10c_tensor_empty_like(OUT, this.raw, dtype, device, options.memoryFormat === undefined ? MemoryFormat.PRESERVE : options.memoryFormat));
    return new Tensor(WRAP, OUT[0]);
  }

  /** A new tensor shaped as this one, every element value (c10c_tensor_full_like; null: zeros). */
  fullLike(value, options = {}) {
    const dtype = options.dtype === undefined ? this.dtype : toDType(options.dtype);
    const device = options.device === undefined ? this.device : toDevice(options.device);
    check(C.c10c_tensor_full_like(OUT, this.raw, dtype, device, options.memoryFormat === undefined ? MemoryFormat.PRESERVE : options.memoryFormat, valueBytes(value, dtype)));
    return new Tensor(WRAP, OUT[0]);
  }

  /** A new reference to the same tensor (c10c_tensor_retain): dispose each separately. */
  retain() {
    return new Tensor(WRAP, c_retain(this.raw));
  }

  // -- metadata --

  /** @type {number} number of dims */
  get dim() { return Number(C.c10c_tensor_dim(this.raw)); }
  /** @type {number[]} */
  get sizes() {
    const p = this.raw;
    const n = Number(C.c10c_tensor_dim(p));
    return n === 0 ? [] : Array.from(koffi.decode(C.c10c_tensor_sizes(p), 'int64_t', n), Number);
  }
  /** Alias of sizes. @type {number[]} */
  get shape() { return this.sizes; }
  /** @type {number[]} strides, in elements */
  get strides() {
    const p = this.raw;
    const n = Number(C.c10c_tensor_dim(p));
    return n === 0 ? [] : Array.from(koffi.decode(C.c10c_tensor_strides(p), 'int64_t', n), Number);
  }
  /** The size of one dim (negative dims count from the end). */
  size(dim) {
    const out = [0];
    check(C.c10c_tensor_size(out, this.raw, dim));
    return Number(out[0]);
  }
  /** The stride of one dim. */
  stride(dim) {
    const out = [0];
    check(C.c10c_tensor_stride(out, this.raw, dim));
    return Number(out[0]);
  }
  /** @type {number} offset of the first element in its storage, in elements */
  get storageOffset() { return Number(C.c10c_tensor_storage_offset(this.raw)); }
  /** @type {number} */
  get numel() { return Number(C.c10c_tensor_numel(this.raw)); }
  /** @type {number} a DType value */
  get dtype() { return C.c10c_tensor_dtype(this.raw); }
  /** @type {Device} */
  get device() {
    const d = C.c10c_tensor_device(this.raw);
    return d.type === 0 && d.index === -1 ? Device.CPU : new Device(d.type, d.index);
  }
  /** @type {number} bytes per element */
  get itemsize() { return Number(C.c10c_tensor_itemsize(this.raw)); }
  /** @type {number} numel * itemsize */
  get nbytes() { return Number(C.c10c_tensor_nbytes(this.raw)); }
  /** Whether the tensor is contiguous in a memory format (default CONTIGUOUS). */
  isContiguous(memoryFormat = MemoryFormat.CONTIGUOUS) {
    const out = [false];
    check(C.c10c_tensor_is_contiguous(out, this.raw, memoryFormat));
    return !!out[0];
  }
  /** @type {boolean} */
  get isReadOnly() { return C.c10c_tensor_is_read_only(this.raw); }
  /** @type {boolean} */
  get isNonOverlappingAndDense() { return C.c10c_tensor_is_non_overlapping_and_dense(this.raw); }
  /** @type {number} the version counter */
  get version() {
    const out = [0];
    check(C.c10c_tensor_version(out, this.raw));
    return Number(out[0]);
  }
  /** Counts an in-place write made through buffer()/data() (c10c_tensor_bump_version). */
  bumpVersion() { check(C.c10c_tensor_bump_version(this.raw)); }
  /** The storage (a new reference: dispose it). */
  storage() {
    const s = C.c10c_tensor_storage(this.raw);
    if (!s) throw lastError(C.c10c_last_error_status() || -1);
    return Storage._adopt(C.c10c_storage_retain(s));
  }
  /** The data pointer (a BigInt address, borrowed; 0n for none). */
  get dataPtr() {
    return C.c10c_tensor_data(this.raw) || 0n;
  }

  toString() {
    if (!this._ptr) return 'Tensor(disposed)';
    return `Tensor(sizes=[${this.sizes}], strides=[${this.strides}], offset=${this.storageOffset}, dtype=${dtypeName(this.dtype)}, device=${this.device})`;
  }

  // -- views (new tensors sharing the storage) --

  /** torch.Tensor.narrow(dim, start, length) */
  narrow(dim, start, length) {
    const rc = C.c10c_tensor_narrow(OUT, this.raw, dim, start, length);
    if (rc !== 0) throw lastError(rc);
    return new Tensor(WRAP, OUT[0]);
  }
  /** torch.Tensor.transpose(dim0, dim1) */
  transpose(dim0, dim1) {
    const rc = C.c10c_tensor_transpose(OUT, this.raw, dim0, dim1);
    if (rc !== 0) throw lastError(rc);
    return new Tensor(WRAP, OUT[0]);
  }
  /** torch.Tensor.select(dim, index) */
  select(dim, index) {
    const rc = C.c10c_tensor_select(OUT, this.raw, dim, index);
    if (rc !== 0) throw lastError(rc);
    return new Tensor(WRAP, OUT[0]);
  }
  /** torch.Tensor.permute(dims) */
  permute(dims) {
    const rc = C.c10c_tensor_permute(OUT, this.raw, int64s(dims), dims.length);
    if (rc !== 0) throw lastError(rc);
    return new Tensor(WRAP, OUT[0]);
  }
  /** torch.Tensor.view(shape): one -1 is inferred */
  view(shape) {
    const rc = C.c10c_tensor_view(OUT, this.raw, int64s(shape), shape.length);
    if (rc !== 0) throw lastError(rc);
    return new Tensor(WRAP, OUT[0]);
  }
  /** torch.Tensor.view(dtype): the same bytes as another dtype */
  viewDtype(dtype) {
    const rc = C.c10c_tensor_view_dtype(OUT, this.raw, toDType(dtype));
    if (rc !== 0) throw lastError(rc);
    return new Tensor(WRAP, OUT[0]);
  }
  /** torch.Tensor.reshape(shape): a view when possible, else a copy */
  reshape(shape) {
    const rc = C.c10c_tensor_reshape(OUT, this.raw, int64s(shape), shape.length);
    if (rc !== 0) throw lastError(rc);
    return new Tensor(WRAP, OUT[0]);
  }
  /** torch.Tensor.unsqueeze(dim) */
  unsqueeze(dim) {
    const rc = C.c10c_tensor_unsqueeze(OUT, this.raw, dim);
    if (rc !== 0) throw lastError(rc);
    return new Tensor(WRAP, OUT[0]);
  }
  /** torch.Tensor.squeeze() without dims; squeeze(dims) (a number or an array) drops those of size 1 */
  squeeze(dims) {
    let rc;
    if (dims === undefined) rc = C.c10c_tensor_squeeze(OUT, this.raw);
    else {
      const d = typeof dims === 'number' ? [dims] : dims;
      rc = C.c10c_tensor_squeeze_dims(OUT, this.raw, int64s(d), d.length);
    }
    if (rc !== 0) throw lastError(rc);
    return new Tensor(WRAP, OUT[0]);
  }
  /** torch.Tensor.expand(sizes) (-1 keeps a size) */
  expand(sizes) {
    const rc = C.c10c_tensor_expand(OUT, this.raw, int64s(sizes), sizes.length);
    if (rc !== 0) throw lastError(rc);
    return new Tensor(WRAP, OUT[0]);
  }
  /**
   * aten::slice(dim, start, end, step). end undefined/null: to the end.
   * Numbers beyond 2^53 are passed as BigInt.
   */
  slice(dim, start = 0, end = null, step = 1) {
    const e = end === null || end === undefined ? 9223372036854775807n : end;
    const rc = C.c10c_tensor_slice(OUT, this.raw, dim, start, e, step);
    if (rc !== 0) throw lastError(rc);
    return new Tensor(WRAP, OUT[0]);
  }
  /** torch.Tensor.as_strided(sizes, strides, storageOffset) (storageOffset omitted: kept) */
  asStrided(sizes, strides, storageOffset) {
    const off = storageOffset === undefined || storageOffset === null ? null : [storageOffset];
    const rc = C.c10c_tensor_as_strided(OUT, this.raw, int64s(sizes), sizes.length, int64s(strides), strides.length, off);
    if (rc !== 0) throw lastError(rc);
    return new Tensor(WRAP, OUT[0]);
  }
  /** torch.Tensor.diagonal(offset, dim1, dim2) */
  diagonal(offset = 0, dim1 = 0, dim2 = 1) {
    const rc = C.c10c_tensor_diagonal(OUT, this.raw, offset, dim1, dim2);
    if (rc !== 0) throw lastError(rc);
    return new Tensor(WRAP, OUT[0]);
  }
  /** torch.Tensor.unfold(dim, size, step) */
  unfold(dim, size, step) {
    const rc = C.c10c_tensor_unfold(OUT, this.raw, dim, size, step);
    if (rc !== 0) throw lastError(rc);
    return new Tensor(WRAP, OUT[0]);
  }
  /** torch.Tensor.flatten(startDim, endDim) */
  flatten(startDim = 0, endDim = -1) {
    const rc = C.c10c_tensor_flatten(OUT, this.raw, startDim, endDim);
    if (rc !== 0) throw lastError(rc);
    return new Tensor(WRAP, OUT[0]);
  }
  /** torch.Tensor.unflatten(dim, sizes) */
  unflatten(dim, sizes) {
    const rc = C.c10c_tensor_unflatten(OUT, this.raw, dim, int64s(sizes), sizes.length);
    if (rc !== 0) throw lastError(rc);
    return new Tensor(WRAP, OUT[0]);
  }
  /** torch.Tensor.movedim(source, destination) (numbers or arrays) */
  movedim(source, destination) {
    const s = typeof source === 'number' ? [source] : source;
    const d = typeof destination === 'number' ? [destination] : destination;
    const rc = C.c10c_tensor_movedim(OUT, this.raw, int64s(s), s.length, int64s(d), d.length);
    if (rc !== 0) throw lastError(rc);
    return new Tensor(WRAP, OUT[0]);
  }

  // -- copies and in-place writes --

  /** torch.Tensor.contiguous(memoryFormat): this tensor (a new reference) when already contiguous */
  contiguous(memoryFormat = MemoryFormat.CONTIGUOUS) {
    check(C.c10c_tensor_contiguous(OUT, this.raw, memoryFormat));
    return new Tensor(WRAP, OUT[0]);
  }
  /** torch.Tensor.clone(memory_format) */
  clone(memoryFormat = MemoryFormat.PRESERVE) {
    check(C.c10c_tensor_clone(OUT, this.raw, memoryFormat));
    return new Tensor(WRAP, OUT[0]);
  }
  /** torch.Tensor.copy_(src); returns this */
  copy_(src) {
    check(C.c10c_tensor_copy_(this.raw, src.raw));
    return this;
  }
  /** torch.Tensor.fill_(value): a number/bigint/boolean, or one element's bytes; returns this */
  fill_(value) {
    check(C.c10c_tensor_fill_(this.raw, valueBytes(value, this.dtype)));
    return this;
  }
  /** torch.Tensor.zero_(); returns this */
  zero_() {
    check(C.c10c_tensor_zero_(this.raw));
    return this;
  }

  // -- data (CPU) --

  /**
   * A zero-copy ArrayBuffer over the tensor's own CPU memory: the bytes from its first element
   * to the last one its sizes and strides reach. Writes through it are the library's data; the
   * memory stays alive while the ArrayBuffer is reachable (it holds its own tensor reference,
   * released by a FinalizationRegistry), even after dispose(). Call bumpVersion() after writes
   * if version counters matter.
   * @returns {ArrayBuffer}
   */
  buffer() {
    const p = this.raw;
    const r = spanOf(p);
    if (r === null) return new ArrayBuffer(0);
    const ab = koffi.view(r.data, r.span * r.itemsize);
    bufferKeepAlive.register(ab, c_retain(p));
    return ab;
  }

  /**
   * A zero-copy TypedArray over buffer() of the dtype's type (Float32Array for float32,
   * BigInt64Array for int64, Uint8Array for bool, Uint16Array for float16/bfloat16 bits, the
   * real type with two numbers per element for complex). Its element i is the storage element
   * at storageOffset + i: index it with strides (or call contiguous() first).
   */
  data() {
    const T = TYPED.get(this.dtype);
    if (!T) throw new C10cError('C10C_STATUS_UNSUPPORTED', `data(): no TypedArray for dtype ${dtypeName(this.dtype)}; use buffer()`);
    return new T(this.buffer());
  }

  /** The elements in row-major order as a JS array (a copy; follows strides; holds no reference). */
  toArray() {
    const sizes = this.sizes, strides = this.strides;
    const p = this.raw;
    const dt = C.c10c_tensor_dtype(p);
    const T = TYPED.get(dt);
    if (!T) throw new C10cError('C10C_STATUS_UNSUPPORTED', `toArray(): dtype ${dtypeName(dt)} is not supported`);
    const r = spanOf(p);
    if (r === null) return [];
    const u8 = koffi.decode(r.data, 'uint8_t', r.span * r.itemsize);
    const view = new T(u8.buffer.slice(u8.byteOffset, u8.byteOffset + u8.byteLength));
    const k = (this.dtype === DType.COMPLEX64 || this.dtype === DType.COMPLEX128) ? 2 : 1;
    const out = [];
    const n = sizes.length;
    if (sizes.some((s) => s === 0)) return out;
    const idx = new Array(n).fill(0);
    for (;;) {
      let off = 0;
      for (let i = 0; i < n; i++) off += idx[i] * strides[i];
      if (k === 1) out.push(this.dtype === DType.BOOL ? view[off] !== 0 : view[off]);
      else out.push([view[2 * off], view[2 * off + 1]]);
      let i = n - 1;
      while (i >= 0 && ++idx[i] === sizes[i]) idx[i--] = 0;
      if (i < 0) break;
    }
    return out;
  }

  // -- DLPack --

  /**
   * Exports to DLPack 1.x (c10c_tensor_to_dlpack_versioned). The result owns the
   * DLManagedTensorVersioned (holding a tensor reference) until dispose() calls its deleter or
   * Tensor.fromDLPack() takes it over.
   * @returns {DLPackTensor}
   */
  toDLPack() {
    const rc = C.c10c_tensor_to_dlpack_versioned(OUT, this.raw);
    if (rc !== 0) throw lastError(rc);
    return new DLPackTensor(WRAP, OUT[0]);
  }

  /**
   * Imports a DLPack 1.x tensor (c10c_tensor_from_dlpack_versioned). On success the library owns
   * the struct (its deleter runs once, when the last tensor over it goes) and the DLPackTensor
   * is consumed; on failure it stays the caller's.
   * @param {DLPackTensor|bigint} src a DLPackTensor, or the address of a DLManagedTensorVersioned
   *   (which the library then owns on success)
   */
  static fromDLPack(src) {
    const isWrapper = src instanceof DLPackTensor;
    const p = isWrapper ? src.raw : BigInt(src);
    const rc = C.c10c_tensor_from_dlpack_versioned(OUT, p);
    if (rc !== 0) throw lastError(rc);
    if (isWrapper) src._consume();
    return new Tensor(WRAP, OUT[0]);
  }
}
if (HAS_DISPOSE) Tensor.prototype[Symbol.dispose] = Tensor.prototype.dispose;

// ---- DLPack -----------------------------------------------------------------------------------

const DELETER = types.DLManagedTensorVersioned_deleter_fn;
function callDeleter(ptr) {
  const deleter = koffi.decode(ptr, koffi.offsetof(types.DLManagedTensorVersioned, 'deleter'), 'void *');
  if (deleter) koffi.call(deleter, DELETER, ptr);
}
const dlpackRegistry = new FinalizationRegistry(callDeleter);

/**
 * An owned DLManagedTensorVersioned (from Tensor#toDLPack). dispose() calls its deleter once;
 * Tensor.fromDLPack() consumes it; the FinalizationRegistry calls the deleter if neither ran.
 */
class DLPackTensor {
  /** @private */
  constructor(token, ptr) {
    if (token !== WRAP) throw new TypeError('use tensor.toDLPack() or DLPackTensor.fromRawOwned()');
    this._ptr = ptr;
    dlpackRegistry.register(this, ptr, this);
  }
  /** Takes over an owned DLManagedTensorVersioned address (BigInt). */
  static fromRawOwned(ptr) {
    if (!ptr) throw new C10cError('C10C_STATUS_NULL_POINTER', 'DLPackTensor.fromRawOwned: NULL pointer');
    return new DLPackTensor(WRAP, BigInt(ptr));
  }
  /** The address of the DLManagedTensorVersioned (a BigInt, borrowed). */
  get raw() {
    const p = this._ptr;
    if (!p) throw new DisposedError('DLPackTensor');
    return p;
  }
  /** Whether it was disposed or consumed. */
  get disposed() { return !this._ptr; }
  /** The struct's fields, decoded (version, flags, dl_tensor with data, device, ndim, dtype). */
  get struct() {
    return koffi.decode(this.raw, types.DLManagedTensorVersioned);
  }
  /** dl_tensor.data (BigInt address). */
  get dataPtr() { return this.struct.dl_tensor.data || 0n; }
  /** dl_tensor's shape as numbers. */
  get shape() {
    const t = this.struct.dl_tensor;
    return t.ndim === 0 ? [] : Array.from(koffi.decode(t.shape, 'int64_t', t.ndim), Number);
  }
  /** Hands the struct over (the caller now owns it; no deleter call here). @returns {bigint} */
  release() {
    const p = this.raw;
    this._consume();
    return p;
  }
  /** @private */
  _consume() {
    dlpackRegistry.unregister(this);
    this._ptr = 0n;
  }
  /** Calls the struct's deleter (once; idempotent). */
  dispose() {
    const p = this._ptr;
    if (p) {
      this._consume();
      callDeleter(p);
    }
  }
}
if (HAS_DISPOSE) DLPackTensor.prototype[Symbol.dispose] = DLPackTensor.prototype.dispose;

// ---- Storage ----------------------------------------------------------------------------------

const storageRegistry = new FinalizationRegistry((ptr) => C.c10c_storage_release(ptr));

/** A storage (bytes with an allocator and a device; a reference to a c10c_storage). */
class Storage {
  /** @private */
  constructor(token, ptr) {
    if (token !== WRAP) throw new TypeError('use Storage.new() or tensor.storage()');
    this._ptr = ptr;
    storageRegistry.register(this, ptr, this);
  }
  /** @private */
  static _adopt(ptr) { return new Storage(WRAP, ptr); }
  /**
   * A new storage of nbytes uninitialized bytes from the installed allocator of a device type
   * (c10c_storage_new).
   * @param {number} nbytes
   * @param {{deviceType?: number, resizable?: boolean}} [options]
   */
  static new(nbytes, options = {}) {
    const dt = options.deviceType === undefined ? DeviceType.CPU : options.deviceType;
    check(C.c10c_storage_new(OUT, nbytes, null, dt, !!options.resizable));
    return new Storage(WRAP, OUT[0]);
  }
  /** The raw c10c_storage pointer (BigInt, borrowed). */
  get raw() {
    const p = this._ptr;
    if (!p) throw new DisposedError('Storage');
    return p;
  }
  /** Whether dispose() was called. */
  get disposed() { return !this._ptr; }
  /** Releases this reference (idempotent). */
  dispose() {
    const p = this._ptr;
    if (p) {
      this._ptr = 0n;
      storageRegistry.unregister(this);
      C.c10c_storage_release(p);
    }
  }
  /** @type {number} */
  get nbytes() { return Number(C.c10c_storage_nbytes(this.raw)); }
  /** @type {Device} */
  get device() { const d = C.c10c_storage_device(this.raw); return new Device(d.type, d.index); }
  /** @type {bigint} the data address (0n for none) */
  get dataPtr() { return C.c10c_storage_data(this.raw) || 0n; }
  /** @type {boolean} */
  get resizable() { return C.c10c_storage_resizable(this.raw); }
  /** @type {boolean} */
  get isReadOnly() { return C.c10c_storage_is_read_only(this.raw); }
  /** @type {number} strong references */
  get useCount() { return C.c10c_storage_use_count(this.raw); }
  /** Resizes a resizable storage (c10c_storage_resize). */
  resize(nbytes) { check(C.c10c_storage_resize(this.raw, nbytes)); }
  /** Makes the storage read-only for every tensor over it. */
  setReadOnly() { check(C.c10c_storage_set_read_only(this.raw)); }
  /** A zero-copy ArrayBuffer over the CPU bytes (keeps the storage alive while reachable). */
  buffer() {
    const p = this.raw;
    const d = C.c10c_storage_device(p);
    if (d.type !== DeviceType.CPU) throw new C10cError('C10C_STATUS_UNSUPPORTED', 'buffer(): the storage is not on CPU');
    const n = Number(C.c10c_storage_nbytes(p));
    const data = C.c10c_storage_data(p);
    if (!data || n === 0) return new ArrayBuffer(0);
    const ab = koffi.view(data, n);
    storageBufferKeepAlive.register(ab, C.c10c_storage_retain(p));
    return ab;
  }
}
if (HAS_DISPOSE) Storage.prototype[Symbol.dispose] = Storage.prototype.dispose;

// ---- version ----------------------------------------------------------------------------------

/** The library's version string ("1.1.0"). */
function version() { return C.c10c_version_string(); }

// Check at load that the library serves this binding's ABI and struct layouts.
(function abiCheck() {
  const info = {
    struct_size: koffi.sizeof(types.c10c_abi_info),
    abi_version: ffi.constants.C10C_ABI_VERSION,
    sizeof_device: koffi.sizeof(types.c10c_device),
    sizeof_stream: koffi.sizeof(types.c10c_stream),
    sizeof_stream_data3: koffi.sizeof(types.c10c_stream_data3),
    sizeof_dispatch_key_set: koffi.sizeof(types.c10c_dispatch_key_set),
    sizeof_data_ptr: koffi.sizeof(types.c10c_data_ptr),
  };
  check(C.c10c_abi_check(info));
})();

module.exports = {
  Tensor,
  Storage,
  DLPackTensor,
  Device,
  DType,
  DeviceType,
  MemoryFormat,
  Layout,
  Status,
  C10cError,
  DisposedError,
  toDType,
  dtypeName,
  dtypeItemsize,
  typedArrayClass,
  statusName,
  allocatorStats,
  version,
  LIBRARY_PATH,
  /** The generated low-level layer: raw C functions by name (`raw.c10c_tensor_empty`), types, enums. */
  raw: C,
  ffi,
};
