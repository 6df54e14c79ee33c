package c10c

import (
	"runtime"
	"sync/atomic"
	"unsafe"

	"github.com/c10c/c10c-go/raw"
)

// Storage is one reference to a libc10c storage: refcounted bytes on a device that tensors view.
// Close releases it; a finalizer releases an unclosed one.
type Storage struct {
	p atomic.Pointer[raw.Storage]
}

func finalizeStorage(s *Storage) {
	if p := s.p.Swap(nil); p != nil {
		raw.StorageRelease(p)
	}
}

func wrapStorage(p *raw.Storage) *Storage {
	s := &Storage{}
	s.p.Store(p)
	runtime.SetFinalizer(s, finalizeStorage)
	return s
}

// NewStorage makes a resizable storage of nbytes uninitialized bytes from the allocator
// installed for the device type (c10c_storage_new).
func NewStorage(nbytes int64, device DeviceType) (*Storage, error) {
	var out *raw.Storage
	if err := raw.StorageNew(&out, nbytes, nil, raw.DeviceType(device), true); err != nil {
		return nil, err
	}
	return wrapStorage(out), nil
}

// Storage returns a new reference to the tensor's storage (c10c_tensor_storage, retained).
func (t *Tensor) Storage() (*Storage, error) {
	p, err := t.ptr("Storage")
	if err != nil {
		return nil, err
	}
	s := raw.StorageRetain(raw.TensorStorage(p))
	runtime.KeepAlive(t)
	return wrapStorage(s), nil
}

// Close releases the reference (c10c_storage_release); a second Close does nothing.
func (s *Storage) Close() error {
	if s == nil {
		return nil
	}
	if p := s.p.Swap(nil); p != nil {
		runtime.SetFinalizer(s, nil)
		raw.StorageRelease(p)
	}
	return nil
}

// Raw returns the C handle, borrowed (nil when closed); keep s reachable while using it.
func (s *Storage) Raw() *raw.Storage {
	if s == nil {
		return nil
	}
	return s.p.Load()
}

func (s *Storage) ptr(op string) (*raw.Storage, error) {
	if p := s.Raw(); p != nil {
		return p, nil
	}
	return nil, closedError("Storage." + op)
}

// NBytes is the storage's size in bytes (0 when closed).
func (s *Storage) NBytes() int64 {
	n := raw.StorageNbytes(s.Raw())
	runtime.KeepAlive(s)
	return n
}

// Device is the storage's device.
func (s *Storage) Device() Device {
	d := deviceOf(raw.StorageDevice(s.Raw()))
	runtime.KeepAlive(s)
	return d
}

// UseCount is the number of strong references to the storage (0 when closed).
func (s *Storage) UseCount() uint32 {
	n := raw.StorageUseCount(s.Raw())
	runtime.KeepAlive(s)
	return n
}

// Resizable reports whether Resize may change the storage's size.
func (s *Storage) Resizable() bool {
	b := raw.StorageResizable(s.Raw())
	runtime.KeepAlive(s)
	return b
}

// IsReadOnly reports whether the storage refuses writes.
func (s *Storage) IsReadOnly() bool {
	b := raw.StorageIsReadOnly(s.Raw())
	runtime.KeepAlive(s)
	return b
}

// SetReadOnly makes the storage (and every tensor over it) refuse in-place writes.
func (s *Storage) SetReadOnly() error {
	p, err := s.ptr("SetReadOnly")
	if err != nil {
		return err
	}
	err = raw.StorageSetReadOnly(p)
	runtime.KeepAlive(s)
	return err
}

// Resize changes the size of a resizable storage, keeping the common bytes.
func (s *Storage) Resize(nbytes int64) error {
	p, err := s.ptr("Resize")
	if err != nil {
		return err
	}
	err = raw.StorageResize(p, nbytes)
	runtime.KeepAlive(s)
	return err
}

// Bytes is the storage's CPU memory as a byte slice (no copy); valid while the storage is open
// and reachable and not resized.
func (s *Storage) Bytes() ([]byte, error) {
	p, err := s.ptr("Bytes")
	if err != nil {
		return nil, err
	}
	n := raw.StorageNbytes(p)
	d := raw.StorageData(p)
	runtime.KeepAlive(s)
	if n == 0 || d == nil {
		return []byte{}, nil
	}
	return unsafe.Slice((*byte)(d), int(n)), nil
}

// NewTensor makes a tensor over the storage (which it retains) with the given geometry,
// checked against the storage's size (c10c_tensor_new_from_storage).
func (s *Storage) NewTensor(sizes, strides []int64, storageOffset int64, dtype DType) (*Tensor, error) {
	p, err := s.ptr("NewTensor")
	if err != nil {
		return nil, err
	}
	if len(sizes) != len(strides) {
		return nil, &Error{Status: StatusInvalidArgument, Message: "NewTensor: sizes and strides differ in length"}
	}
	var out *raw.Tensor
	err = raw.TensorNewFromStorage(&out, p, i64p(sizes), i64p(strides), uint(len(sizes)),
		storageOffset, raw.Dtype(dtype))
	runtime.KeepAlive(s)
	if err != nil {
		return nil, err
	}
	return wrapTensor(out), nil
}
