// Package c10c is the idiomatic Go binding of libc10c, the C library that gives PyTorch's c10
// core: tensors, storages, dtypes, devices, views, DLPack and allocators.
//
// Ownership: a *Tensor, *Storage or *DLPack owns one reference to its C object. Close releases it
// (Close is idempotent: a second Close does nothing and returns nil); a finalizer releases the
// reference of a value that becomes unreachable unclosed, but finalizers run late or never, so
// close what you make. Every method of a closed value fails with an error that wraps ErrClosed
// (the metadata getters, which return no error, return zero values instead); nothing crashes.
//
// Threads: the library's reference counts, allocators and error slot are safe from any thread,
// so values may be used and closed from any goroutine. As in c10, changing one value from two
// goroutines at once (Close included) while another uses it is the caller's race.
//
// Errors: a failing library call returns an *Error with the library's status and message
// (errors.As(err, &e)); the message is read in the same cgo call as the failure.
package c10c

import (
	"errors"
	"fmt"

	"github.com/c10c/c10c-go/raw"
)

// Error is a failed library call: its status (Status.Name() is "C10C_STATUS_INDEX_OUT_OF_RANGE",
// ...) and the library's message, word for word (c10c_last_error_message).
type Error = raw.Error

// Status is a c10c_status code (C10C_STATUS_*).
type Status = raw.Status

// The library's status codes.
const (
	StatusOK              Status = raw.C10C_STATUS_OK
	StatusError           Status = raw.C10C_STATUS_ERROR
	StatusInvalidArgument Status = raw.C10C_STATUS_INVALID_ARGUMENT
	StatusIndexOutOfRange Status = raw.C10C_STATUS_INDEX_OUT_OF_RANGE
	StatusTypeError       Status = raw.C10C_STATUS_TYPE_ERROR
	StatusNotImplemented  Status = raw.C10C_STATUS_NOT_IMPLEMENTED
	StatusOutOfMemory     Status = raw.C10C_STATUS_OUT_OF_MEMORY
	StatusOverflow        Status = raw.C10C_STATUS_OVERFLOW
	StatusNullPointer     Status = raw.C10C_STATUS_NULL_POINTER
	StatusBufferTooSmall  Status = raw.C10C_STATUS_BUFFER_TOO_SMALL
	StatusUnavailable     Status = raw.C10C_STATUS_UNAVAILABLE
	StatusABIMismatch     Status = raw.C10C_STATUS_ABI_MISMATCH
	StatusInternal        Status = raw.C10C_STATUS_INTERNAL
	StatusUnsupported     Status = raw.C10C_STATUS_UNSUPPORTED
)

// ErrClosed is wrapped by the error of every method called on a closed Tensor, Storage or
// DLPack (or on a nil one).
var ErrClosed = errors.New("use of a closed handle (Close was called)")

func closedError(what string) error {
	return fmt.Errorf("c10c: %s: %w", what, ErrClosed)
}

// Version is the library's version string (c10c_version_string, "1.1.0").
func Version() string { return raw.VersionString() }

// DType is a c10 scalar type (c10c_dtype).
type DType int8

// The dtypes, with c10's numbering.
const (
	Uint8          DType = raw.C10C_DTYPE_UINT8
	Int8           DType = raw.C10C_DTYPE_INT8
	Int16          DType = raw.C10C_DTYPE_INT16
	Int32          DType = raw.C10C_DTYPE_INT32
	Int64          DType = raw.C10C_DTYPE_INT64
	Float16        DType = raw.C10C_DTYPE_FLOAT16
	Float32        DType = raw.C10C_DTYPE_FLOAT32
	Float64        DType = raw.C10C_DTYPE_FLOAT64
	Complex32      DType = raw.C10C_DTYPE_COMPLEX32
	Complex64      DType = raw.C10C_DTYPE_COMPLEX64
	Complex128     DType = raw.C10C_DTYPE_COMPLEX128
	Bool           DType = raw.C10C_DTYPE_BOOL
	QInt8          DType = raw.C10C_DTYPE_QINT8
	QUInt8         DType = raw.C10C_DTYPE_QUINT8
	QInt32         DType = raw.C10C_DTYPE_QINT32
	BFloat16       DType = raw.C10C_DTYPE_BFLOAT16
	QUInt4x2       DType = raw.C10C_DTYPE_QUINT4X2
	QUInt2x4       DType = raw.C10C_DTYPE_QUINT2X4
	Bits1x8        DType = raw.C10C_DTYPE_BITS1X8
	Bits2x4        DType = raw.C10C_DTYPE_BITS2X4
	Bits4x2        DType = raw.C10C_DTYPE_BITS4X2
	Bits8          DType = raw.C10C_DTYPE_BITS8
	Bits16         DType = raw.C10C_DTYPE_BITS16
	Float8E5M2     DType = raw.C10C_DTYPE_FLOAT8_E5M2
	Float8E4M3FN   DType = raw.C10C_DTYPE_FLOAT8_E4M3FN
	Float8E5M2FNUZ DType = raw.C10C_DTYPE_FLOAT8_E5M2FNUZ
	Float8E4M3FNUZ DType = raw.C10C_DTYPE_FLOAT8_E4M3FNUZ
	Uint16         DType = raw.C10C_DTYPE_UINT16
	Uint32         DType = raw.C10C_DTYPE_UINT32
	Uint64         DType = raw.C10C_DTYPE_UINT64
	Float8E8M0FNU  DType = raw.C10C_DTYPE_FLOAT8_E8M0FNU
	Float4E2M1FNx2 DType = raw.C10C_DTYPE_FLOAT4_E2M1FN_X2
	UndefinedDType DType = raw.C10C_DTYPE_UNDEFINED
)

// String is torch's name without "torch." ("float32"); "undefined"-like names come from the
// library (c10c_dtype_name).
func (d DType) String() string { return raw.DtypeName(raw.Dtype(d)) }

// ItemSize is the size of one element in bytes (0 for Undefined and invalid values).
func (d DType) ItemSize() int { return int(raw.DtypeItemsize(raw.Dtype(d))) }

// Valid reports whether d is one of c10's dtypes (Undefined included).
func (d DType) Valid() bool { return raw.DtypeIsValid(raw.Dtype(d)) }

// IsFloatingPoint reports whether d is a floating-point dtype (c10's isFloatingType).
func (d DType) IsFloatingPoint() bool { return raw.DtypeIsFloatingPoint(raw.Dtype(d)) }

// IsComplex reports whether d is a complex dtype.
func (d DType) IsComplex() bool { return raw.DtypeIsComplex(raw.Dtype(d)) }

// ParseDType parses a dtype name as torch spells it ("float32", "float", "torch.int64", ...;
// c10c_dtype_from_name).
func ParseDType(name string) (DType, error) {
	var d raw.Dtype
	b := raw.CString(name)
	if err := raw.DtypeFromName(&d, &b[0]); err != nil {
		return UndefinedDType, err
	}
	return DType(d), nil
}

// DeviceType is a c10 device type (c10c_device_type).
type DeviceType int8

// The device types, with c10's numbering.
const (
	DeviceCPU         DeviceType = raw.C10C_DEVICE_TYPE_CPU
	DeviceCUDA        DeviceType = raw.C10C_DEVICE_TYPE_CUDA
	DeviceMKLDNN      DeviceType = raw.C10C_DEVICE_TYPE_MKLDNN
	DeviceOpenGL      DeviceType = raw.C10C_DEVICE_TYPE_OPENGL
	DeviceOpenCL      DeviceType = raw.C10C_DEVICE_TYPE_OPENCL
	DeviceIDEEP       DeviceType = raw.C10C_DEVICE_TYPE_IDEEP
	DeviceHIP         DeviceType = raw.C10C_DEVICE_TYPE_HIP
	DeviceFPGA        DeviceType = raw.C10C_DEVICE_TYPE_FPGA
	DeviceMAIA        DeviceType = raw.C10C_DEVICE_TYPE_MAIA
	DeviceXLA         DeviceType = raw.C10C_DEVICE_TYPE_XLA
	DeviceVulkan      DeviceType = raw.C10C_DEVICE_TYPE_VULKAN
	DeviceMetal       DeviceType = raw.C10C_DEVICE_TYPE_METAL
	DeviceXPU         DeviceType = raw.C10C_DEVICE_TYPE_XPU
	DeviceMPS         DeviceType = raw.C10C_DEVICE_TYPE_MPS
	DeviceMeta        DeviceType = raw.C10C_DEVICE_TYPE_META
	DeviceHPU         DeviceType = raw.C10C_DEVICE_TYPE_HPU
	DeviceVE          DeviceType = raw.C10C_DEVICE_TYPE_VE
	DeviceLazy        DeviceType = raw.C10C_DEVICE_TYPE_LAZY
	DeviceIPU         DeviceType = raw.C10C_DEVICE_TYPE_IPU
	DeviceMTIA        DeviceType = raw.C10C_DEVICE_TYPE_MTIA
	DevicePrivateUse1 DeviceType = raw.C10C_DEVICE_TYPE_PRIVATEUSE1
)

// String is the device type's lower-case name as device strings spell it ("cpu", "cuda").
func (t DeviceType) String() string { return raw.DeviceTypeName(raw.DeviceType(t), true) }

// Valid reports whether t is one of the 21 device types.
func (t DeviceType) Valid() bool { return raw.DeviceTypeIsValid(raw.DeviceType(t)) }

// Device is a device type and index (-1: no index), as c10::Device.
type Device struct {
	Type  DeviceType
	Index int8
}

// CPU is the CPU device (no index), where tensors are made by default.
var CPU = Device{Type: DeviceCPU, Index: -1}

// Meta is the meta device: tensors with geometry and no data.
var Meta = Device{Type: DeviceMeta, Index: -1}

func (d Device) raw() raw.Device {
	return raw.Device{Type: raw.DeviceType(d.Type), Index: raw.DeviceIndex(d.Index)}
}

func deviceOf(r raw.Device) Device { return Device{Type: DeviceType(r.Type), Index: int8(r.Index)} }

// String formats the device as c10 does ("cpu", "cuda:1").
func (d Device) String() string {
	var buf [raw.C10C_DEVICE_STRING_MAX]byte
	if err := raw.DeviceToString(&buf[0], uint(len(buf)), d.raw()); err != nil {
		return fmt.Sprintf("invalid device (%d, %d)", d.Type, d.Index)
	}
	return raw.GoString(&buf[0])
}

// ParseDevice parses a device string as c10 does ("cpu", "cuda:0", "meta").
func ParseDevice(s string) (Device, error) {
	var d raw.Device
	b := raw.CString(s)
	if err := raw.DeviceFromString(&d, &b[0]); err != nil {
		return Device{}, err
	}
	return deviceOf(d), nil
}

// MemoryFormat is a c10 memory format (c10c_memory_format).
type MemoryFormat int8

// The memory formats.
const (
	Contiguous     MemoryFormat = raw.C10C_MEMORY_FORMAT_CONTIGUOUS
	Preserve       MemoryFormat = raw.C10C_MEMORY_FORMAT_PRESERVE
	ChannelsLast   MemoryFormat = raw.C10C_MEMORY_FORMAT_CHANNELS_LAST
	ChannelsLast3d MemoryFormat = raw.C10C_MEMORY_FORMAT_CHANNELS_LAST_3D
)

// String is c10's name of the format ("Contiguous", ...; c10c_memory_format_name).
func (f MemoryFormat) String() string { return raw.MemoryFormatName(raw.MemoryFormat(f)) }

// MemoryStats are an allocator's statistics (torch.cuda.memory_stats's fields).
type MemoryStats = raw.MemoryStats

// AllocatorStats reads the statistics of the allocator installed for a device type
// (c10c_allocator_get and c10c_allocator_get_stats).
func AllocatorStats(t DeviceType) (MemoryStats, error) {
	var st MemoryStats
	var a *raw.Allocator
	if err := raw.AllocatorGet(&a, raw.DeviceType(t)); err != nil {
		return st, err
	}
	defer raw.AllocatorRelease(a)
	st.StructSize = uint32(unsafeSizeofMemoryStats)
	if err := raw.AllocatorGetStats(&st, a); err != nil {
		return st, err
	}
	return st, nil
}

// CPULiveAllocations is the number of live allocations of the CPU allocator
// (allocation[C10C_STAT_ALL].current of its statistics).
func CPULiveAllocations() (int64, error) {
	st, err := AllocatorStats(DeviceCPU)
	if err != nil {
		return 0, err
	}
	return st.Allocation[raw.C10C_STAT_ALL].Current, nil
}
