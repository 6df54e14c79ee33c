package c10c

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"unsafe"

	"github.com/c10c/c10c-go/raw"
)

const unsafeSizeofMemoryStats = unsafe.Sizeof(MemoryStats{})

// Tensor is one reference to a libc10c tensor (c10's TensorImpl): sizes, strides, a storage
// offset, a dtype and a device over a refcounted storage. Views share the storage.
//
// Close releases the reference; a finalizer releases it if the Tensor becomes unreachable
// unclosed. Methods of a closed Tensor fail with an error wrapping ErrClosed; its getters return
// zero values.
type Tensor struct {
	p unsafe.Pointer // *raw.Tensor, accessed atomically once published
}

func (t *Tensor) load() *raw.Tensor { return (*raw.Tensor)(atomic.LoadPointer(&t.p)) }

func (t *Tensor) swapNil() *raw.Tensor { return (*raw.Tensor)(atomic.SwapPointer(&t.p, nil)) }

// slot is where a creation function writes the new handle of a Tensor not yet published: the
// C call fills the Go object directly, so that making a tensor allocates one Go object only.
func (t *Tensor) slot() **raw.Tensor { return (**raw.Tensor)(unsafe.Pointer(&t.p)) }

func finalizeTensor(t *Tensor) {
	if p := t.swapNil(); p != nil {
		raw.TensorRelease(p)
	}
}

// wrapTensor takes ownership of one reference to p.
func wrapTensor(p *raw.Tensor) *Tensor {
	t := &Tensor{p: unsafe.Pointer(p)}
	runtime.SetFinalizer(t, finalizeTensor)
	return t
}

// made finishes a creation call that wrote o's slot: o with its finalizer, or err.
func made(o *Tensor, err error) (*Tensor, error) {
	if err != nil {
		return nil, err
	}
	runtime.SetFinalizer(o, finalizeTensor)
	return o, nil
}

// WrapRaw makes a Tensor that owns one reference to p (a new reference that the caller gives
// away, as the raw layer's creation functions return). nil gives nil.
func WrapRaw(p *raw.Tensor) *Tensor {
	if p == nil {
		return nil
	}
	return wrapTensor(p)
}

// Raw returns the C handle, borrowed: valid while t is open and reachable (use
// runtime.KeepAlive(t) after the last use of the handle). nil when closed.
func (t *Tensor) Raw() *raw.Tensor {
	if t == nil {
		return nil
	}
	return t.load()
}

// Close releases the tensor's reference (c10c_tensor_release). Closing a closed or nil Tensor
// does nothing. It always returns nil.
func (t *Tensor) Close() error {
	if t == nil {
		return nil
	}
	if p := t.swapNil(); p != nil {
		runtime.SetFinalizer(t, nil)
		raw.TensorRelease(p)
	}
	return nil
}

// Closed reports whether Close was called.
func (t *Tensor) Closed() bool { return t == nil || t.load() == nil }

func (t *Tensor) ptr(op string) (*raw.Tensor, error) {
	if t != nil {
		if p := t.load(); p != nil {
			return p, nil
		}
	}
	return nil, closedError("Tensor." + op)
}

func i64p(s []int64) *int64 {
	if len(s) == 0 {
		return nil
	}
	return &s[0]
}

// ---- creation ----

// Empty makes a contiguous tensor of the given shape with uninitialized data
// (c10c_tensor_empty).
func Empty(shape []int64, dtype DType, device Device) (*Tensor, error) {
	return EmptyFormat(shape, dtype, device, Contiguous)
}

// EmptyFormat makes a tensor with uninitialized data laid out in the given memory format
// (Contiguous, ChannelsLast for 4 dims, ChannelsLast3d for 5).
func EmptyFormat(shape []int64, dtype DType, device Device, format MemoryFormat) (*Tensor, error) {
	o := &Tensor{}
	return made(o, raw.TensorEmpty(o.slot(), i64p(shape), uint(len(shape)), raw.Dtype(dtype),
		device.raw(), raw.MemoryFormat(format)))
}

// EmptyStrided makes a tensor with the given sizes and strides over a new storage just large
// enough for them (c10c_tensor_empty_strided).
func EmptyStrided(sizes, strides []int64, dtype DType, device Device) (*Tensor, error) {
	if len(sizes) != len(strides) {
		return nil, fmt.Errorf("c10c: EmptyStrided: %d sizes but %d strides", len(sizes), len(strides))
	}
	var out *raw.Tensor
	if err := raw.TensorEmptyStrided(&out, i64p(sizes), i64p(strides), uint(len(sizes)),
		raw.Dtype(dtype), device.raw()); err != nil {
		return nil, err
	}
	return wrapTensor(out), nil
}

// Zeros makes a contiguous tensor of zeros (c10c_tensor_full with no value).
func Zeros(shape []int64, dtype DType, device Device) (*Tensor, error) {
	var out *raw.Tensor
	if err := raw.TensorFull(&out, i64p(shape), uint(len(shape)), raw.Dtype(dtype), device.raw(),
		raw.C10C_MEMORY_FORMAT_CONTIGUOUS, nil); err != nil {
		return nil, err
	}
	return wrapTensor(out), nil
}

// Full makes a contiguous CPU tensor with every element set to value, whose Go type gives the
// dtype (c10c_tensor_full).
func Full[T Element](shape []int64, value T) (*Tensor, error) {
	var out *raw.Tensor
	v := value
	if err := raw.TensorFull(&out, i64p(shape), uint(len(shape)), raw.Dtype(DTypeOf[T]()),
		CPU.raw(), raw.C10C_MEMORY_FORMAT_CONTIGUOUS, unsafe.Pointer(&v)); err != nil {
		return nil, err
	}
	return wrapTensor(out), nil
}

// Element is a Go type with a c10 dtype of the same representation.
type Element interface {
	~uint8 | ~int8 | ~int16 | ~int32 | ~int64 | ~float32 | ~float64 | ~bool | ~uint16 |
		~uint32 | ~uint64 | ~complex64 | ~complex128
}

// DTypeOf is the dtype whose elements have T's representation (float32: Float32, bool: Bool,
// complex64: Complex64, ...).
func DTypeOf[T Element]() DType {
	var z T
	switch any(z).(type) {
	case uint8:
		return Uint8
	case int8:
		return Int8
	case int16:
		return Int16
	case int32:
		return Int32
	case int64:
		return Int64
	case float32:
		return Float32
	case float64:
		return Float64
	case bool:
		return Bool
	case uint16:
		return Uint16
	case uint32:
		return Uint32
	case uint64:
		return Uint64
	case complex64:
		return Complex64
	case complex128:
		return Complex128
	}
	// a named type: go by size and kind through its underlying type
	switch unsafe.Sizeof(z) {
	case 1:
		return Uint8
	case 2:
		return Int16
	case 4:
		return Int32
	case 16:
		return Complex128
	}
	return Int64
}

// FromSlice makes a contiguous CPU tensor of the given shape holding a copy of data; its dtype
// is DTypeOf[T](). With no shape the tensor is 1-dimensional, of len(data) elements.
func FromSlice[T Element](data []T, shape ...int64) (*Tensor, error) {
	if len(shape) == 0 {
		shape = []int64{int64(len(data))}
	}
	t, err := Empty(shape, DTypeOf[T](), CPU)
	if err != nil {
		return nil, err
	}
	dst, err := Data[T](t)
	if err != nil {
		t.Close()
		return nil, err
	}
	if len(dst) != len(data) {
		t.Close()
		return nil, fmt.Errorf("c10c: FromSlice: %d values for shape %v (%d elements)", len(data),
			shape, len(dst))
	}
	copy(dst, data)
	runtime.KeepAlive(t)
	return t, nil
}

// FromFloat32s makes a float32 CPU tensor from a copy of data (see FromSlice).
func FromFloat32s(data []float32, shape ...int64) (*Tensor, error) { return FromSlice(data, shape...) }

// FromFloat64s makes a float64 CPU tensor from a copy of data (see FromSlice).
func FromFloat64s(data []float64, shape ...int64) (*Tensor, error) { return FromSlice(data, shape...) }

// FromInt64s makes an int64 CPU tensor from a copy of data (see FromSlice).
func FromInt64s(data []int64, shape ...int64) (*Tensor, error) { return FromSlice(data, shape...) }

// FromInt32s makes an int32 CPU tensor from a copy of data (see FromSlice).
func FromInt32s(data []int32, shape ...int64) (*Tensor, error) { return FromSlice(data, shape...) }

// ---- metadata (zero values when closed) ----

// Dim is the number of dimensions.
func (t *Tensor) Dim() int {
	n := int(raw.TensorDim(t.Raw()))
	runtime.KeepAlive(t)
	return n
}

// Numel is the number of elements.
func (t *Tensor) Numel() int64 {
	n := raw.TensorNumel(t.Raw())
	runtime.KeepAlive(t)
	return n
}

func copyI64(p *int64, n int) []int64 {
	out := make([]int64, n)
	if n > 0 && p != nil {
		copy(out, unsafe.Slice(p, n))
	}
	return out
}

// Sizes is a copy of the sizes (nil when closed).
func (t *Tensor) Sizes() []int64 {
	p := t.Raw()
	if p == nil {
		return nil
	}
	s := copyI64(raw.TensorSizes(p), int(raw.TensorDim(p)))
	runtime.KeepAlive(t)
	return s
}

// Strides is a copy of the strides, in elements (nil when closed).
func (t *Tensor) Strides() []int64 {
	p := t.Raw()
	if p == nil {
		return nil
	}
	s := copyI64(raw.TensorStrides(p), int(raw.TensorDim(p)))
	runtime.KeepAlive(t)
	return s
}

// Size is the size of dimension dim (-1 is the last).
func (t *Tensor) Size(dim int64) (int64, error) {
	p, err := t.ptr("Size")
	if err != nil {
		return 0, err
	}
	var out int64
	err = raw.TensorSize(&out, p, dim)
	runtime.KeepAlive(t)
	return out, err
}

// Stride is the stride of dimension dim (-1 is the last).
func (t *Tensor) Stride(dim int64) (int64, error) {
	p, err := t.ptr("Stride")
	if err != nil {
		return 0, err
	}
	var out int64
	err = raw.TensorStride(&out, p, dim)
	runtime.KeepAlive(t)
	return out, err
}

// StorageOffset is the offset of the first element in the storage, in elements.
func (t *Tensor) StorageOffset() int64 {
	n := raw.TensorStorageOffset(t.Raw())
	runtime.KeepAlive(t)
	return n
}

// DType is the tensor's dtype (UndefinedDType when closed).
func (t *Tensor) DType() DType {
	d := DType(raw.TensorDtype(t.Raw()))
	runtime.KeepAlive(t)
	return d
}

// Device is the tensor's device (CPU when closed).
func (t *Tensor) Device() Device {
	d := deviceOf(raw.TensorDevice(t.Raw()))
	runtime.KeepAlive(t)
	return d
}

// ItemSize is the size of one element in bytes.
func (t *Tensor) ItemSize() int {
	n := int(raw.TensorItemsize(t.Raw()))
	runtime.KeepAlive(t)
	return n
}

// NBytes is Numel() * ItemSize() (math.MaxInt64 when that exceeds int64).
func (t *Tensor) NBytes() int64 {
	n := raw.TensorNbytes(t.Raw())
	runtime.KeepAlive(t)
	return n
}

// IsContiguous reports row-major contiguity (false when closed).
func (t *Tensor) IsContiguous() bool {
	ok, err := t.IsContiguousFormat(Contiguous)
	return ok && err == nil
}

// IsContiguousFormat reports contiguity in a memory format (c10's is_contiguous(format)).
func (t *Tensor) IsContiguousFormat(f MemoryFormat) (bool, error) {
	p, err := t.ptr("IsContiguous")
	if err != nil {
		return false, err
	}
	var out bool
	err = raw.TensorIsContiguous(&out, p, raw.MemoryFormat(f))
	runtime.KeepAlive(t)
	return out, err
}

// IsReadOnly reports whether the storage is read-only (a read-only DLPack import, ...).
func (t *Tensor) IsReadOnly() bool {
	b := raw.TensorIsReadOnly(t.Raw())
	runtime.KeepAlive(t)
	return b
}

// Version is the version counter shared by the tensors over the same storage.
func (t *Tensor) Version() (int64, error) {
	p, err := t.ptr("Version")
	if err != nil {
		return 0, err
	}
	var out int64
	err = raw.TensorVersion(&out, p)
	runtime.KeepAlive(t)
	return out, err
}

// BumpVersion counts an in-place write made through the tensor's data (as ATen's in-place ops).
func (t *Tensor) BumpVersion() error {
	p, err := t.ptr("BumpVersion")
	if err != nil {
		return err
	}
	err = raw.TensorBumpVersion(p)
	runtime.KeepAlive(t)
	return err
}

// String describes the tensor's geometry, e.g. "Tensor(sizes=[2 3], strides=[3 1], offset=0,
// dtype=float32, device=cpu)".
func (t *Tensor) String() string {
	if t.Closed() {
		return "Tensor(closed)"
	}
	return fmt.Sprintf("Tensor(sizes=%v, strides=%v, offset=%d, dtype=%v, device=%v)", t.Sizes(),
		t.Strides(), t.StorageOffset(), t.DType(), t.Device())
}

// ---- data ----

// DataPtr is the address of the first element (c10c_tensor_data): nil when closed, for a meta
// tensor, a tensor without bytes, or one whose storage shrank under it. Borrowed: valid while t
// (or another reference to its storage) is open; keep t reachable while you use it.
func (t *Tensor) DataPtr() unsafe.Pointer {
	d := raw.TensorData(t.Raw())
	runtime.KeepAlive(t)
	return d
}

// Bytes is the tensor's data as a byte slice over its CPU memory (no copy). The tensor must be
// contiguous. The slice is valid only while the tensor is open: keep t reachable (Close it, or
// call runtime.KeepAlive(t), after the last use of the slice), since the finalizer of an
// unreachable tensor frees the memory.
func (t *Tensor) Bytes() ([]byte, error) {
	p, err := t.ptr("Bytes")
	if err != nil {
		return nil, err
	}
	n, err := t.dataLen("Bytes")
	if err != nil {
		return nil, err
	}
	nb := int(n) * int(raw.TensorItemsize(p))
	if nb == 0 {
		runtime.KeepAlive(t)
		return []byte{}, nil
	}
	d := raw.TensorData(p)
	if d == nil {
		return nil, dataError(p, t)
	}
	runtime.KeepAlive(t)
	return unsafe.Slice((*byte)(d), nb), nil
}

func dataError(p *raw.Tensor, t *Tensor) error {
	runtime.KeepAlive(t)
	return fmt.Errorf("c10c: the tensor has no data to read on the host (device %v)", t.Device())
}

func (t *Tensor) dataLen(op string) (int64, error) {
	p, err := t.ptr(op)
	if err != nil {
		return 0, err
	}
	dev := DeviceType(raw.TensorDevice(p).Type)
	if dev != DeviceCPU {
		return 0, fmt.Errorf("c10c: Tensor.%s: the tensor is on %v, not the CPU", op, dev)
	}
	var ok bool
	if err := raw.TensorIsContiguous(&ok, p, raw.C10C_MEMORY_FORMAT_CONTIGUOUS); err != nil {
		return 0, err
	}
	if !ok {
		return 0, fmt.Errorf("c10c: Tensor.%s: the tensor is not contiguous (use Contiguous())", op)
	}
	n := raw.TensorNumel(p)
	runtime.KeepAlive(t)
	return n, nil
}

// Data is the tensor's elements as a []T over its CPU memory (no copy); T must match the dtype
// (DTypeOf[T]() == t.DType()) and the tensor must be contiguous. The slice is valid only while
// the tensor is open and reachable (see Bytes).
func Data[T Element](t *Tensor) ([]T, error) {
	p, err := t.ptr("Data")
	if err != nil {
		return nil, err
	}
	if want := DTypeOf[T](); DType(raw.TensorDtype(p)) != want {
		return nil, fmt.Errorf("c10c: Data: the tensor's dtype is %v, not %v", t.DType(), want)
	}
	n, err := t.dataLen("Data")
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return []T{}, nil
	}
	d := raw.TensorData(p)
	if d == nil {
		return nil, dataError(p, t)
	}
	runtime.KeepAlive(t)
	return unsafe.Slice((*T)(d), int(n)), nil
}

// Float32s is Data[float32](t): the elements of a contiguous float32 CPU tensor, no copy.
func (t *Tensor) Float32s() ([]float32, error) { return Data[float32](t) }

// Float64s is Data[float64](t).
func (t *Tensor) Float64s() ([]float64, error) { return Data[float64](t) }

// Int64s is Data[int64](t).
func (t *Tensor) Int64s() ([]int64, error) { return Data[int64](t) }

// Int32s is Data[int32](t).
func (t *Tensor) Int32s() ([]int32, error) { return Data[int32](t) }

// ---- copies ----

// CopyFrom copies src into t (torch's copy_: broadcast, dtype conversion).
func (t *Tensor) CopyFrom(src *Tensor) error {
	p, err := t.ptr("CopyFrom")
	if err != nil {
		return err
	}
	s, err := src.ptr("CopyFrom (source)")
	if err != nil {
		return err
	}
	err = raw.TensorCopy_(p, s)
	runtime.KeepAlive(t)
	runtime.KeepAlive(src)
	return err
}

// Zero sets every element to zero in place (torch's zero_).
func (t *Tensor) Zero() error {
	p, err := t.ptr("Zero")
	if err != nil {
		return err
	}
	err = raw.TensorZero_(p)
	runtime.KeepAlive(t)
	return err
}

// Fill sets every element to value in place (torch's fill_); T must match the dtype.
func Fill[T Element](t *Tensor, value T) error {
	p, err := t.ptr("Fill")
	if err != nil {
		return err
	}
	if want := DTypeOf[T](); DType(raw.TensorDtype(p)) != want {
		return fmt.Errorf("c10c: Fill: the tensor's dtype is %v, not %v", t.DType(), want)
	}
	v := value
	err = raw.TensorFill_(p, unsafe.Pointer(&v))
	runtime.KeepAlive(t)
	return err
}

// Clone copies the tensor into a new storage (torch's clone(memory_format=Contiguous)).
func (t *Tensor) Clone() (*Tensor, error) {
	return t.unary("Clone", func(out **raw.Tensor, p *raw.Tensor) error {
		return raw.TensorClone(out, p, raw.C10C_MEMORY_FORMAT_CONTIGUOUS)
	})
}

// Contiguous is the tensor itself (a new reference) when row-major contiguous, else a
// contiguous copy.
func (t *Tensor) Contiguous() (*Tensor, error) {
	return t.unary("Contiguous", func(out **raw.Tensor, p *raw.Tensor) error {
		return raw.TensorContiguous(out, p, raw.C10C_MEMORY_FORMAT_CONTIGUOUS)
	})
}

// EmptyLike makes an uninitialized tensor of t's sizes (strides kept when dense, torch's
// empty_like with preserve_format) with the given dtype and device.
func (t *Tensor) EmptyLike(dtype DType, device Device) (*Tensor, error) {
	return t.unary("EmptyLike", func(out **raw.Tensor, p *raw.Tensor) error {
		return raw.TensorEmptyLike(out, p, raw.Dtype(dtype), device.raw(), raw.C10C_MEMORY_FORMAT_PRESERVE)
	})
}

func (t *Tensor) unary(op string, f func(out **raw.Tensor, p *raw.Tensor) error) (*Tensor, error) {
	p, err := t.ptr(op)
	if err != nil {
		return nil, err
	}
	o := &Tensor{}
	err = f(o.slot(), p)
	runtime.KeepAlive(t)
	return made(o, err)
}
