// TypeScript declarations of the public API of the libc10c Node.js binding (lib/index.js).
// [Symbol.dispose] needs TypeScript 5.2+ with lib "esnext.disposable" (or a newer lib).

/** dtypes (c10::ScalarType values, frozen for ABI 1.x). */
export declare const DType: Readonly<{
  UINT8: 0; INT8: 1; INT16: 2; INT32: 3; INT64: 4; FLOAT16: 5; FLOAT32: 6; FLOAT64: 7;
  COMPLEX32: 8; COMPLEX64: 9; COMPLEX128: 10; BOOL: 11; QINT8: 12; QUINT8: 13; QINT32: 14;
  BFLOAT16: 15; QUINT4X2: 16; QUINT2X4: 17; BITS1X8: 18; BITS2X4: 19; BITS4X2: 20; BITS8: 21;
  BITS16: 22; FLOAT8_E5M2: 23; FLOAT8_E4M3FN: 24; FLOAT8_E5M2FNUZ: 25; FLOAT8_E4M3FNUZ: 26;
  UINT16: 27; UINT32: 28; UINT64: 29; UINT1: 30; UINT2: 31; UINT3: 32; UINT4: 33; UINT5: 34;
  UINT6: 35; UINT7: 36; INT1: 37; INT2: 38; INT3: 39; INT4: 40; INT5: 41; INT6: 42; INT7: 43;
  FLOAT8_E8M0FNU: 44; FLOAT4_E2M1FN_X2: 45; UNDEFINED: 46;
}>;
export type DTypeValue = (typeof DType)[keyof typeof DType];
/** A dtype value or its torch name ("float32", "int64", legacy "float"). */
export type DTypeLike = number | string;

/** Device types (c10::DeviceType). */
export declare const DeviceType: Readonly<{
  CPU: 0; CUDA: 1; MKLDNN: 2; OPENGL: 3; OPENCL: 4; IDEEP: 5; HIP: 6; FPGA: 7; MAIA: 8; XLA: 9;
  VULKAN: 10; METAL: 11; XPU: 12; MPS: 13; META: 14; HPU: 15; VE: 16; LAZY: 17; IPU: 18;
  MTIA: 19; PRIVATEUSE1: 20;
}>;
export declare const MemoryFormat: Readonly<{ CONTIGUOUS: 0; PRESERVE: 1; CHANNELS_LAST: 2; CHANNELS_LAST_3D: 3 }>;
export declare const Layout: Readonly<{
  STRIDED: 0; SPARSE: 1; SPARSE_CSR: 2; MKLDNN: 3; SPARSE_CSC: 4; SPARSE_BSR: 5; SPARSE_BSC: 6; JAGGED: 7;
}>;
/** Status codes by short name (Status.OK === 0). */
export declare const Status: Readonly<Record<
  'OK' | 'ERROR' | 'INVALID_ARGUMENT' | 'INDEX_OUT_OF_RANGE' | 'TYPE_ERROR' | 'NOT_IMPLEMENTED' |
  'OUT_OF_MEMORY' | 'OVERFLOW' | 'NULL_POINTER' | 'BUFFER_TOO_SMALL' | 'UNAVAILABLE' |
  'ABI_MISMATCH' | 'INTERNAL' | 'UNSUPPORTED', number>>;

/** An error the library reported. */
export declare class C10cError extends Error {
  constructor(status: string, message: string, code?: number);
  /** The status code's C name, e.g. "C10C_STATUS_INDEX_OUT_OF_RANGE". */
  readonly status: string;
  /** The numeric status (negative). */
  readonly code: number;
}
/** Thrown when a Tensor, Storage or DLPackTensor is used after dispose() (status C10C_STATUS_NULL_POINTER). */
export declare class DisposedError extends C10cError {}

/** A device: type and index (-1: none). */
export declare class Device {
  constructor(type: number, index?: number);
  readonly type: number;
  readonly index: number;
  static readonly CPU: Device;
  /** Parses "cpu", "cuda:1", "meta", ... */
  static parse(str: string): Device;
  toString(): string;
  equals(other: DeviceLike): boolean;
}
export type DeviceLike = Device | string | number | { type: number; index?: number };

export interface TensorOptions {
  dtype?: DTypeLike;
  device?: DeviceLike;
  memoryFormat?: number;
}

/** One element's value for fill/full: a number, bigint or boolean, or its native bytes. */
export type ScalarLike = number | bigint | boolean | ArrayBufferView;

export type ElementArray =
  | Int8Array | Uint8Array | Int16Array | Uint16Array | Int32Array | Uint32Array
  | Float32Array | Float64Array | BigInt64Array | BigUint64Array;

/** A strided tensor (a reference to a c10c_tensor). */
export declare class Tensor {
  private constructor();
  static empty(shape: readonly number[], options?: TensorOptions): Tensor;
  static zeros(shape: readonly number[], options?: TensorOptions): Tensor;
  static full(shape: readonly number[], value: ScalarLike, options?: TensorOptions): Tensor;
  static emptyStrided(sizes: readonly number[], strides: readonly number[], options?: TensorOptions): Tensor;
  /** A CPU tensor holding a copy of the array's elements (1-D unless shape is given). */
  static fromTypedArray(array: ArrayBufferView, shape?: readonly number[], options?: { dtype?: DTypeLike }): Tensor;
  static fromStorage(storage: Storage, sizes: readonly number[], strides: readonly number[], storageOffset?: number, dtype?: DTypeLike): Tensor;
  /** Imports DLPack 1.x; on success the DLPackTensor is consumed (the library calls its deleter). */
  static fromDLPack(src: DLPackTensor | bigint): Tensor;
  /** Wraps a raw c10c_tensor pointer, taking over the caller's reference. */
  static fromRawOwned(ptr: bigint): Tensor;

  /** The raw c10c_tensor pointer (borrowed). */
  readonly raw: bigint;
  readonly disposed: boolean;
  /** Releases this reference (idempotent). */
  dispose(): void;
  /** Releases this reference on a koffi worker thread; the Tensor is disposed at once. */
  disposeAsync(): Promise<void>;
  [Symbol.dispose](): void;
  /** A new reference to the same tensor. */
  retain(): Tensor;
  emptyLike(options?: TensorOptions): Tensor;
  fullLike(value: ScalarLike | null, options?: TensorOptions): Tensor;

  readonly dim: number;
  readonly sizes: number[];
  readonly shape: number[];
  readonly strides: number[];
  size(dim: number): number;
  stride(dim: number): number;
  readonly storageOffset: number;
  readonly numel: number;
  readonly dtype: DTypeValue;
  readonly device: Device;
  readonly itemsize: number;
  readonly nbytes: number;
  isContiguous(memoryFormat?: number): boolean;
  readonly isReadOnly: boolean;
  readonly isNonOverlappingAndDense: boolean;
  readonly version: number;
  bumpVersion(): void;
  /** The storage (a new reference). */
  storage(): Storage;
  /** The data address (borrowed; 0n for none). */
  readonly dataPtr: bigint;

  narrow(dim: number, start: number, length: number): Tensor;
  transpose(dim0: number, dim1: number): Tensor;
  select(dim: number, index: number): Tensor;
  permute(dims: readonly number[]): Tensor;
  view(shape: readonly number[]): Tensor;
  viewDtype(dtype: DTypeLike): Tensor;
  reshape(shape: readonly number[]): Tensor;
  unsqueeze(dim: number): Tensor;
  squeeze(dims?: number | readonly number[]): Tensor;
  expand(sizes: readonly number[]): Tensor;
  slice(dim: number, start?: number | bigint, end?: number | bigint | null, step?: number): Tensor;
  asStrided(sizes: readonly number[], strides: readonly number[], storageOffset?: number | null): Tensor;
  diagonal(offset?: number, dim1?: number, dim2?: number): Tensor;
  unfold(dim: number, size: number, step: number): Tensor;
  flatten(startDim?: number, endDim?: number): Tensor;
  unflatten(dim: number, sizes: readonly number[]): Tensor;
  movedim(source: number | readonly number[], destination: number | readonly number[]): Tensor;

  contiguous(memoryFormat?: number): Tensor;
  clone(memoryFormat?: number): Tensor;
  copy_(src: Tensor): this;
  fill_(value: ScalarLike): this;
  zero_(): this;

  /** Zero-copy view of the CPU bytes from the first element to the last one reached; keeps the memory alive. */
  buffer(): ArrayBuffer;
  /** Zero-copy TypedArray over buffer() (element i is the storage element storageOffset + i). */
  data(): ElementArray;
  /** The elements in row-major order (a copy). */
  toArray(): Array<number | bigint | boolean | [number, number]>;
  /** Exports to DLPack 1.x. */
  toDLPack(): DLPackTensor;
  toString(): string;
}

/** An owned DLManagedTensorVersioned. */
export declare class DLPackTensor {
  private constructor();
  /** Takes over an owned DLManagedTensorVersioned address. */
  static fromRawOwned(ptr: bigint): DLPackTensor;
  readonly raw: bigint;
  readonly disposed: boolean;
  /** The decoded struct (version, manager_ctx, deleter, flags, dl_tensor). */
  readonly struct: {
    version: { major: number; minor: number };
    manager_ctx: bigint | null;
    deleter: bigint | null;
    flags: number | bigint;
    dl_tensor: {
      data: bigint | null; device: { device_type: number; device_id: number }; ndim: number;
      dtype: { code: number; bits: number; lanes: number }; shape: bigint | null; strides: bigint | null;
      byte_offset: number | bigint;
    };
  };
  readonly dataPtr: bigint;
  readonly shape: number[];
  /** Hands the struct over to the caller (no deleter call). */
  release(): bigint;
  /** Calls the deleter once (idempotent). */
  dispose(): void;
  [Symbol.dispose](): void;
}

/** A storage (a reference to a c10c_storage). */
export declare class Storage {
  private constructor();
  static new(nbytes: number, options?: { deviceType?: number; resizable?: boolean }): Storage;
  readonly raw: bigint;
  readonly disposed: boolean;
  dispose(): void;
  [Symbol.dispose](): void;
  readonly nbytes: number;
  readonly device: Device;
  readonly dataPtr: bigint;
  readonly resizable: boolean;
  readonly isReadOnly: boolean;
  readonly useCount: number;
  resize(nbytes: number): void;
  setReadOnly(): void;
  buffer(): ArrayBuffer;
}

export declare function toDType(dtype: DTypeLike): number;
export declare function dtypeName(dtype: DTypeLike): string;
export declare function dtypeItemsize(dtype: DTypeLike): number;
export declare function typedArrayClass(dtype: DTypeLike): (new (buffer: ArrayBufferLike) => ElementArray) | undefined;
/** "C10C_STATUS_" + c10c_status_name(code). */
export declare function statusName(code: number): string;
export interface Stat { current: number | bigint; peak: number | bigint; allocated: number | bigint; freed: number | bigint }
/** c10c_memory_stats of the installed allocator of a device type (allocation[0].current: live allocations). */
export declare function allocatorStats(deviceType?: number): { allocation: Stat[]; [field: string]: unknown };
export declare function version(): string;
/** The library path in use ($C10C_LIBRARY or "libc10c.so.1"). */
export declare const LIBRARY_PATH: string;
/** The raw C functions (generated, lib/ffi.js), by C name. */
export declare const raw: Record<string, ((...args: any[]) => any) & { async: (...args: any[]) => void }>;
/** The generated low-level module (koffi, types, enums, constants, prototypes, meta, open). */
export declare const ffi: {
  koffi: any;
  types: Record<string, any>;
  enums: Readonly<Record<string, Readonly<Record<string, number>>>>;
  constants: Readonly<Record<string, number>>;
  prototypes: Readonly<Record<string, string>>;
  meta: Readonly<Record<string, { since: string; result: string | null; releaseWith: string | null; errors: readonly string[] }>>;
  undeclarable: Readonly<Record<string, string>>;
  open(path: string): { lib: any; fn: Record<string, (...args: any[]) => any>; declareAll(): number };
};
