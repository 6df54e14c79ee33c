package c10c

import (
	"runtime"
	"sync/atomic"
	"unsafe"

	"github.com/c10c/c10c-go/raw"
)

// DLPack owns a DLPack 1.x DLManagedTensorVersioned: an export of a tensor (ToDLPack) or a
// struct from another producer (WrapDLPack). Close calls its deleter, once; FromDLPack hands it
// to a new Tensor instead. A finalizer calls the deleter of an unclosed, unconsumed DLPack.
type DLPack struct {
	p atomic.Pointer[raw.DLManagedTensorVersioned]
}

func finalizeDLPack(d *DLPack) {
	if p := d.p.Swap(nil); p != nil {
		raw.DLManagedTensorVersionedDelete(p)
	}
}

// WrapDLPack takes ownership of a producer's DLManagedTensorVersioned (nil gives nil).
func WrapDLPack(m *raw.DLManagedTensorVersioned) *DLPack {
	if m == nil {
		return nil
	}
	d := &DLPack{}
	d.p.Store(m)
	runtime.SetFinalizer(d, finalizeDLPack)
	return d
}

// ToDLPack exports the tensor as a DLPack 1.3 struct sharing its memory
// (c10c_tensor_to_dlpack_versioned). The export keeps the tensor's memory alive until its
// deleter runs (Close), whatever happens to t.
func (t *Tensor) ToDLPack() (*DLPack, error) {
	p, err := t.ptr("ToDLPack")
	if err != nil {
		return nil, err
	}
	var out *raw.DLManagedTensorVersioned
	err = raw.TensorToDlpackVersioned(&out, p)
	runtime.KeepAlive(t)
	if err != nil {
		return nil, err
	}
	return WrapDLPack(out), nil
}

// FromDLPack makes a tensor over the DLPack's memory, taking the struct: on success d is
// consumed (its Close does nothing) and the deleter runs once, when the last tensor, view or
// storage over the memory is released. On failure d is still the caller's.
func FromDLPack(d *DLPack) (*Tensor, error) {
	m := d.Managed()
	if m == nil {
		return nil, closedError("FromDLPack")
	}
	var out *raw.Tensor
	if err := raw.TensorFromDlpackVersioned(&out, m); err != nil {
		runtime.KeepAlive(d)
		return nil, err
	}
	if d.p.CompareAndSwap(m, nil) {
		runtime.SetFinalizer(d, nil)
	}
	return wrapTensor(out), nil
}

// Close calls the struct's deleter unless it was consumed or closed before; always nil.
func (d *DLPack) Close() error {
	if d == nil {
		return nil
	}
	if p := d.p.Swap(nil); p != nil {
		runtime.SetFinalizer(d, nil)
		raw.DLManagedTensorVersionedDelete(p)
	}
	return nil
}

// Managed is the C struct, borrowed (nil once closed or consumed); keep d reachable while
// using it.
func (d *DLPack) Managed() *raw.DLManagedTensorVersioned {
	if d == nil {
		return nil
	}
	return d.p.Load()
}

// Release gives the struct to the caller, who must then have its deleter called once (hand it
// to a consumer); d becomes empty. nil when closed or consumed.
func (d *DLPack) Release() *raw.DLManagedTensorVersioned {
	if d == nil {
		return nil
	}
	p := d.p.Swap(nil)
	if p != nil {
		runtime.SetFinalizer(d, nil)
	}
	return p
}

// Data is the address of the first element (DLTensor.data + byte_offset); nil when closed.
func (d *DLPack) Data() unsafe.Pointer {
	m := d.Managed()
	if m == nil {
		return nil
	}
	p := unsafe.Add(m.DlTensor.Data, m.DlTensor.ByteOffset)
	runtime.KeepAlive(d)
	return p
}

// Shape is a copy of DLTensor.shape (nil when closed).
func (d *DLPack) Shape() []int64 {
	m := d.Managed()
	if m == nil {
		return nil
	}
	s := copyI64(m.DlTensor.Shape, int(m.DlTensor.Ndim))
	runtime.KeepAlive(d)
	return s
}

// Strides is a copy of DLTensor.strides in elements (nil when closed or when NULL).
func (d *DLPack) Strides() []int64 {
	m := d.Managed()
	if m == nil || m.DlTensor.Strides == nil {
		return nil
	}
	s := copyI64(m.DlTensor.Strides, int(m.DlTensor.Ndim))
	runtime.KeepAlive(d)
	return s
}

// DataType is DLTensor.dtype (code, bits, lanes).
func (d *DLPack) DataType() raw.DLDataType {
	m := d.Managed()
	if m == nil {
		return raw.DLDataType{}
	}
	return m.DlTensor.Dtype
}

// DLDevice is DLTensor.device.
func (d *DLPack) DLDevice() raw.DLDevice {
	m := d.Managed()
	if m == nil {
		return raw.DLDevice{}
	}
	return m.DlTensor.Device
}

// Flags is the struct's flags (raw.C10C_DLPACK_FLAG_BITMASK_READ_ONLY, ...).
func (d *DLPack) Flags() uint64 {
	m := d.Managed()
	if m == nil {
		return 0
	}
	return m.Flags
}

// DeleterWatch counts the calls of a DLPack's deleter.
type DeleterWatch = raw.DeleterWatch

// WatchDeleter interposes a counter in front of the struct's deleter (see raw.WatchDeleter):
// Calls() then says how many times the deleter ran. Call it before FromDLPack or Close.
func (d *DLPack) WatchDeleter() (*DeleterWatch, error) {
	m := d.Managed()
	if m == nil {
		return nil, closedError("DLPack.WatchDeleter")
	}
	w, err := raw.WatchDeleter(m)
	runtime.KeepAlive(d)
	return w, err
}
