package c10c

import (
	"runtime"

	"github.com/c10c/c10c-go/raw"
)

// The views below are new tensors sharing t's storage (and its version counter); each returns a
// new Tensor to Close. Dims are wrapped as ATen's (-1 is the last). Errors are ATen's, with its
// words: *Error with StatusError or StatusIndexOutOfRange.

func (t *Tensor) view(o *Tensor, err error) (*Tensor, error) {
	runtime.KeepAlive(t)
	return made(o, err)
}

// Transpose swaps two dims (torch.Tensor.transpose).
func (t *Tensor) Transpose(dim0, dim1 int64) (*Tensor, error) {
	p, err := t.ptr("Transpose")
	if err != nil {
		return nil, err
	}
	o := &Tensor{}
	err = raw.TensorTranspose(o.slot(), p, dim0, dim1)
	return t.view(o, err)
}

// Narrow keeps length elements of dim from start (torch.Tensor.narrow).
func (t *Tensor) Narrow(dim, start, length int64) (*Tensor, error) {
	p, err := t.ptr("Narrow")
	if err != nil {
		return nil, err
	}
	o := &Tensor{}
	err = raw.TensorNarrow(o.slot(), p, dim, start, length)
	return t.view(o, err)
}

// Select picks index along dim, dropping dim (torch.Tensor.select).
func (t *Tensor) Select(dim, index int64) (*Tensor, error) {
	p, err := t.ptr("Select")
	if err != nil {
		return nil, err
	}
	o := &Tensor{}
	err = raw.TensorSelect(o.slot(), p, dim, index)
	return t.view(o, err)
}

// Permute reorders the dims (torch.Tensor.permute).
func (t *Tensor) Permute(dims ...int64) (*Tensor, error) {
	p, err := t.ptr("Permute")
	if err != nil {
		return nil, err
	}
	o := &Tensor{}
	err = raw.TensorPermute(o.slot(), p, i64p(dims), uint(len(dims)))
	return t.view(o, err)
}

// View gives the tensor a new shape over the same elements; one size may be -1
// (torch.Tensor.view).
func (t *Tensor) View(shape ...int64) (*Tensor, error) {
	p, err := t.ptr("View")
	if err != nil {
		return nil, err
	}
	o := &Tensor{}
	err = raw.TensorView(o.slot(), p, i64p(shape), uint(len(shape)))
	return t.view(o, err)
}

// ViewDType reinterprets the elements as another dtype (torch.Tensor.view(dtype)).
func (t *Tensor) ViewDType(dtype DType) (*Tensor, error) {
	p, err := t.ptr("ViewDType")
	if err != nil {
		return nil, err
	}
	o := &Tensor{}
	err = raw.TensorViewDtype(o.slot(), p, raw.Dtype(dtype))
	return t.view(o, err)
}

// Reshape is View when a view can be made, else a contiguous copy (torch.Tensor.reshape).
func (t *Tensor) Reshape(shape ...int64) (*Tensor, error) {
	p, err := t.ptr("Reshape")
	if err != nil {
		return nil, err
	}
	o := &Tensor{}
	err = raw.TensorReshape(o.slot(), p, i64p(shape), uint(len(shape)))
	return t.view(o, err)
}

// Unsqueeze inserts a size-1 dim at dim (torch.Tensor.unsqueeze).
func (t *Tensor) Unsqueeze(dim int64) (*Tensor, error) {
	p, err := t.ptr("Unsqueeze")
	if err != nil {
		return nil, err
	}
	o := &Tensor{}
	err = raw.TensorUnsqueeze(o.slot(), p, dim)
	return t.view(o, err)
}

// Squeeze drops every size-1 dim (torch.Tensor.squeeze()).
func (t *Tensor) Squeeze() (*Tensor, error) {
	p, err := t.ptr("Squeeze")
	if err != nil {
		return nil, err
	}
	o := &Tensor{}
	err = raw.TensorSqueeze(o.slot(), p)
	return t.view(o, err)
}

// SqueezeDims drops the listed dims that have size 1 (torch.Tensor.squeeze(dims)).
func (t *Tensor) SqueezeDims(dims ...int64) (*Tensor, error) {
	p, err := t.ptr("SqueezeDims")
	if err != nil {
		return nil, err
	}
	o := &Tensor{}
	err = raw.TensorSqueezeDims(o.slot(), p, i64p(dims), uint(len(dims)))
	return t.view(o, err)
}

// Expand broadcasts size-1 dims to sizes with stride 0; -1 keeps a size (torch.Tensor.expand).
func (t *Tensor) Expand(sizes ...int64) (*Tensor, error) {
	p, err := t.ptr("Expand")
	if err != nil {
		return nil, err
	}
	o := &Tensor{}
	err = raw.TensorExpand(o.slot(), p, i64p(sizes), uint(len(sizes)))
	return t.view(o, err)
}

// Slice is aten::slice(dim, start, end, step): negative start and end count from the end, both
// are clamped (math.MaxInt64 for "to the end"); step > 0.
func (t *Tensor) Slice(dim, start, end, step int64) (*Tensor, error) {
	p, err := t.ptr("Slice")
	if err != nil {
		return nil, err
	}
	o := &Tensor{}
	err = raw.TensorSlice(o.slot(), p, dim, start, end, step)
	return t.view(o, err)
}

// AsStrided makes a view with the given sizes, strides and storage offset over t's storage
// (torch.Tensor.as_strided).
func (t *Tensor) AsStrided(sizes, strides []int64, storageOffset int64) (*Tensor, error) {
	p, err := t.ptr("AsStrided")
	if err != nil {
		return nil, err
	}
	o := &Tensor{}
	off := storageOffset
	err = raw.TensorAsStrided(o.slot(), p, i64p(sizes), uint(len(sizes)), i64p(strides),
		uint(len(strides)), &off)
	return t.view(o, err)
}

// AsStridedKeepOffset is AsStrided keeping t's storage offset.
func (t *Tensor) AsStridedKeepOffset(sizes, strides []int64) (*Tensor, error) {
	p, err := t.ptr("AsStridedKeepOffset")
	if err != nil {
		return nil, err
	}
	o := &Tensor{}
	err = raw.TensorAsStrided(o.slot(), p, i64p(sizes), uint(len(sizes)), i64p(strides),
		uint(len(strides)), nil)
	return t.view(o, err)
}

// Diagonal is the diagonal of dims dim1 and dim2 shifted by offset, as a new last dim
// (torch.Tensor.diagonal).
func (t *Tensor) Diagonal(offset, dim1, dim2 int64) (*Tensor, error) {
	p, err := t.ptr("Diagonal")
	if err != nil {
		return nil, err
	}
	o := &Tensor{}
	err = raw.TensorDiagonal(o.slot(), p, offset, dim1, dim2)
	return t.view(o, err)
}

// Unfold makes windows of size along dim, step apart, as a new last dim (torch.Tensor.unfold).
func (t *Tensor) Unfold(dim, size, step int64) (*Tensor, error) {
	p, err := t.ptr("Unfold")
	if err != nil {
		return nil, err
	}
	o := &Tensor{}
	err = raw.TensorUnfold(o.slot(), p, dim, size, step)
	return t.view(o, err)
}

// Flatten merges dims startDim..endDim (reshape semantics: a copy when no view can be made;
// torch.Tensor.flatten).
func (t *Tensor) Flatten(startDim, endDim int64) (*Tensor, error) {
	p, err := t.ptr("Flatten")
	if err != nil {
		return nil, err
	}
	o := &Tensor{}
	err = raw.TensorFlatten(o.slot(), p, startDim, endDim)
	return t.view(o, err)
}

// Unflatten splits dim into sizes; one may be -1 (torch.Tensor.unflatten).
func (t *Tensor) Unflatten(dim int64, sizes ...int64) (*Tensor, error) {
	p, err := t.ptr("Unflatten")
	if err != nil {
		return nil, err
	}
	o := &Tensor{}
	err = raw.TensorUnflatten(o.slot(), p, dim, i64p(sizes), uint(len(sizes)))
	return t.view(o, err)
}

// Movedim moves the dims source to the positions destination (torch.Tensor.movedim).
func (t *Tensor) Movedim(source, destination []int64) (*Tensor, error) {
	p, err := t.ptr("Movedim")
	if err != nil {
		return nil, err
	}
	o := &Tensor{}
	err = raw.TensorMovedim(o.slot(), p, i64p(source), uint(len(source)), i64p(destination),
		uint(len(destination)))
	return t.view(o, err)
}
