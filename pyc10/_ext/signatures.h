/* The signature table: every function and method pyc10's argument parser binds, in torch's own
 * signature strings (torch/csrc/autograd/generated/python_*.cpp, read from torch 2.13's
 * libtorch_python.so), overloads in torch's order. One source for three things: the parser
 * (argparse.c includes this file), the docstrings' signature lines, and the .pyi stubs
 * (gen_stubs.py reads this file).
 *
 * PA_ENTRY(kind, name, doc, signature, ...): kind is the Python class (Tensor) or module (pyc10)
 * the name belongs to. A signature may end in "-> Type" (the stub's return type) and in
 * "|deprecated" or "|hidden" (bound but never printed, as torch).
 */

/* ---- Tensor: shape and strides ---- */
PA_ENTRY(Tensor, size, "The sizes (a pyc10.Size), or the size of one dim.",
         "size(int64_t? dim=None) -> Size | int")
PA_ENTRY(Tensor, stride, "The strides (a tuple), or the stride of one dim.",
         "stride(int64_t? dim=None) -> tuple[int, ...] | int")
PA_ENTRY(Tensor, is_contiguous, "c10's is_contiguous for a memory format.",
         "is_contiguous(*, MemoryFormat memory_format=contiguous_format) -> bool")

/* ---- Tensor: views ---- */
PA_ENTRY(Tensor, view,
         "The same elements under another shape (one -1 is inferred), or as another dtype.",
         "view(ScalarType dtype) -> Tensor", "view(SymIntArrayRef size) -> Tensor")
PA_ENTRY(Tensor, view_as, "view(other.shape).", "view_as(Tensor other) -> Tensor")
PA_ENTRY(Tensor, reshape, "A view when the strides allow one, else a contiguous copy.",
         "reshape(SymIntArrayRef shape) -> Tensor")
PA_ENTRY(Tensor, reshape_as, "reshape(other.shape).", "reshape_as(Tensor other) -> Tensor")
PA_ENTRY(Tensor, permute, "The dimensions in another order.", "permute(IntArrayRef dims) -> Tensor")
PA_ENTRY(Tensor, expand,
         "Size-1 dimensions (and new leading ones) broadcast to size; -1 keeps a size.",
         "expand(SymIntArrayRef size, *, bool implicit=False) -> Tensor")
PA_ENTRY(Tensor, expand_as, "expand(other.shape).", "expand_as(Tensor other) -> Tensor")
PA_ENTRY(Tensor, broadcast_to, "expand(size).", "broadcast_to(SymIntArrayRef size) -> Tensor")
PA_ENTRY(Tensor, transpose, "Two dimensions swapped.",
         "transpose(int64_t dim0, int64_t dim1) -> Tensor")
PA_ENTRY(Tensor, swapaxes, "transpose(axis0, axis1).",
         "swapaxes(int64_t axis0, int64_t axis1) -> Tensor")
PA_ENTRY(Tensor, swapdims, "transpose(dim0, dim1).",
         "swapdims(int64_t dim0, int64_t dim1) -> Tensor")
PA_ENTRY(Tensor, squeeze, "Dimensions of size 1 dropped: all, or those named.",
         "squeeze() -> Tensor", "squeeze(int64_t dim) -> Tensor",
         "squeeze(IntArrayRef dim) -> Tensor")
PA_ENTRY(Tensor, unsqueeze, "A dimension of size 1 inserted at dim.",
         "unsqueeze(int64_t dim) -> Tensor")
PA_ENTRY(Tensor, flatten, "Dims start_dim..end_dim merged into one (reshape semantics).",
         "flatten(int64_t start_dim=0, int64_t end_dim=-1) -> Tensor")
PA_ENTRY(Tensor, unflatten, "dim split into sizes (one -1 inferred).",
         "unflatten(int64_t dim, SymIntArrayRef sizes) -> Tensor")
PA_ENTRY(Tensor, narrow, "Elements start .. start + length - 1 along dim.",
         "narrow(int64_t dim, Tensor start, SymInt length) -> Tensor",
         "narrow(int64_t dim, SymInt start, SymInt length) -> Tensor")
PA_ENTRY(Tensor, select, "The slice at index along dim, without that dim.",
         "select(int64_t dim, SymInt index) -> Tensor")
PA_ENTRY(Tensor, movedim, "Dims moved from source positions to destination positions.",
         "movedim(int64_t source, int64_t destination) -> Tensor",
         "movedim(IntArrayRef source, IntArrayRef destination) -> Tensor")
PA_ENTRY(Tensor, moveaxis, "movedim(source, destination).",
         "moveaxis(int64_t source, int64_t destination) -> Tensor",
         "moveaxis(IntArrayRef source, IntArrayRef destination) -> Tensor")
PA_ENTRY(Tensor, diagonal, "The diagonal of the (dim1, dim2) planes as a new last dim.",
         "diagonal(int64_t offset=0, int64_t dim1=0, int64_t dim2=1) -> Tensor")
PA_ENTRY(Tensor, unfold, "Windows of size along dimension, every step elements, as a new last dim.",
         "unfold(int64_t dimension, int64_t size, int64_t step) -> Tensor")
PA_ENTRY(
    Tensor, as_strided, "A view with these sizes, strides and storage offset.",
    "as_strided(SymIntArrayRef size, SymIntArrayRef stride, SymInt? storage_offset=None) -> Tensor")
PA_ENTRY(Tensor, chunk, "At most chunks pieces of equal size along dim (the last may be smaller).",
         "chunk(int64_t chunks, int64_t dim=0) -> tuple[Tensor, ...]")
PA_ENTRY(Tensor, split_with_sizes, "Pieces of the listed sizes along dim.",
         "split_with_sizes(SymIntArrayRef split_sizes, int64_t dim=0) -> tuple[Tensor, ...]")
PA_ENTRY(Tensor, unbind, "Every index along dim as a tensor without that dim.",
         "unbind(int64_t dim=0) -> tuple[Tensor, ...]")

/* ---- Tensor: torch parity (views, flags, storages) ---- */
PA_ENTRY(Tensor, unsafe_chunk, "chunk's pieces, not recorded as views of self (_base None).",
         "unsafe_chunk(int64_t chunks, int64_t dim=0) -> tuple[Tensor, ...]")
PA_ENTRY(Tensor, unsafe_split, "split(split_size)'s pieces, not recorded as views of self.",
         "unsafe_split(SymInt split_size, int64_t dim=0) -> tuple[Tensor, ...]")
PA_ENTRY(Tensor, unsafe_split_with_sizes,
         "split_with_sizes's pieces, not recorded as views of self.",
         "unsafe_split_with_sizes(SymIntArrayRef split_sizes, int64_t dim=0) -> tuple[Tensor, "
         "...]")
PA_ENTRY(Tensor, narrow_copy, "narrow(dim, start, length) as a new contiguous tensor.",
         "narrow_copy(int64_t dim, SymInt start, SymInt length) -> Tensor")

/* ---- Tensor: data ---- */
PA_ENTRY(Tensor, clone, "A copy with its own storage; preserve_format keeps dense strides.",
         "clone(*, MemoryFormat? memory_format=None) -> Tensor")
PA_ENTRY(Tensor, contiguous, "self when already contiguous in memory_format, else a copy that is.",
         "contiguous(*, MemoryFormat memory_format=contiguous_format) -> Tensor")
PA_ENTRY(Tensor, copy_, "src (broadcast to this shape, any dtype) copied into self; returns self.",
         "copy_(Tensor other, bool non_blocking=False) -> Tensor",
         "copy_(Tensor other, bool async=False) -> Tensor|deprecated")
PA_ENTRY(Tensor, split,
         "Pieces of split_size along dim (the last may be smaller), or of the listed sizes.",
         "split(SymInt split_size, int64_t dim=0) -> tuple[Tensor, ...]",
         "split(SymIntArrayRef split_size, int64_t dim=0) -> tuple[Tensor, ...]")

/* ---- pyc10 functions ---- */
PA_ENTRY(pyc10, split_with_sizes, "Pieces of the listed sizes along dim.",
         "split_with_sizes(Tensor input, SymIntArrayRef split_sizes, int64_t dim=0) -> "
         "tuple[Tensor, ...]")

/* ---- pyc10 functions: the function forms of Tensor methods (functions.c makes one for each
 * entry whose method Tensor has); signatures in torch's order, from torch's error listings ---- */
PA_ENTRY(pyc10, transpose, "Tensor.transpose as a function of input.",
         "transpose(Tensor input, int64_t dim0, int64_t dim1) -> Tensor")
PA_ENTRY(pyc10, swapaxes, "Tensor.swapaxes as a function of input.",
         "swapaxes(Tensor input, int64_t axis0, int64_t axis1) -> Tensor")
PA_ENTRY(pyc10, swapdims, "Tensor.swapdims as a function of input.",
         "swapdims(Tensor input, int64_t dim0, int64_t dim1) -> Tensor")
PA_ENTRY(pyc10, t, "Tensor.t as a function of input.", "t(Tensor input) -> Tensor")
PA_ENTRY(pyc10, permute, "Tensor.permute as a function of input.",
         "permute(Tensor input, IntArrayRef dims) -> Tensor")
PA_ENTRY(pyc10, reshape, "Tensor.reshape as a function of input.",
         "reshape(Tensor input, SymIntArrayRef shape) -> Tensor")
PA_ENTRY(pyc10, squeeze, "Tensor.squeeze as a function of input.",
         "squeeze(Tensor input) -> Tensor", "squeeze(Tensor input, int64_t dim) -> Tensor",
         "squeeze(Tensor input, IntArrayRef dim) -> Tensor")
PA_ENTRY(pyc10, unsqueeze, "Tensor.unsqueeze as a function of input.",
         "unsqueeze(Tensor input, int64_t dim) -> Tensor")
PA_ENTRY(pyc10, flatten, "Tensor.flatten as a function of input.",
         "flatten(Tensor input, int64_t start_dim=0, int64_t end_dim=-1) -> Tensor")
PA_ENTRY(pyc10, unflatten, "Tensor.unflatten as a function of input.",
         "unflatten(Tensor input, int64_t dim, SymIntArrayRef sizes) -> Tensor")
PA_ENTRY(pyc10, narrow, "Tensor.narrow as a function of input.",
         "narrow(Tensor input, int64_t dim, Tensor start, SymInt length) -> Tensor",
         "narrow(Tensor input, int64_t dim, SymInt start, SymInt length) -> Tensor")
PA_ENTRY(pyc10, select, "Tensor.select as a function of input.",
         "select(Tensor input, int64_t dim, SymInt index) -> Tensor")
PA_ENTRY(pyc10, movedim, "Tensor.movedim as a function of input.",
         "movedim(Tensor input, int64_t source, int64_t destination) -> Tensor",
         "movedim(Tensor input, IntArrayRef source, IntArrayRef destination) -> Tensor")
PA_ENTRY(pyc10, moveaxis, "Tensor.moveaxis as a function of input.",
         "moveaxis(Tensor input, int64_t source, int64_t destination) -> Tensor",
         "moveaxis(Tensor input, IntArrayRef source, IntArrayRef destination) -> Tensor")
PA_ENTRY(pyc10, diagonal, "Tensor.diagonal as a function of input.",
         "diagonal(Tensor input, int64_t offset=0, int64_t dim1=0, int64_t dim2=1) -> Tensor")
PA_ENTRY(pyc10, chunk, "Tensor.chunk as a function of input.",
         "chunk(Tensor input, int64_t chunks, int64_t dim=0) -> tuple[Tensor, ...]")
PA_ENTRY(pyc10, unbind, "Tensor.unbind as a function of input.",
         "unbind(Tensor input, int64_t dim=0) -> tuple[Tensor, ...]")
PA_ENTRY(pyc10, as_strided, "Tensor.as_strided as a function of input.",
         "as_strided(Tensor input, SymIntArrayRef size, SymIntArrayRef stride, SymInt? "
         "storage_offset=None) -> Tensor")
PA_ENTRY(pyc10, broadcast_to, "Tensor.broadcast_to as a function of input.",
         "broadcast_to(Tensor input, SymIntArrayRef size) -> Tensor")
PA_ENTRY(pyc10, clone, "Tensor.clone as a function of input.",
         "clone(Tensor input, *, MemoryFormat? memory_format=None) -> Tensor")
PA_ENTRY(pyc10, numel, "Tensor.numel as a function of input.", "numel(Tensor input) -> int")
PA_ENTRY(pyc10, is_inference, "Tensor.is_inference as a function of input.",
         "is_inference(Tensor input) -> bool")

/* ---- torch._VF functions pyc10 binds internally (no pyc10 name): Tensor.split's int path ---- */
PA_ENTRY(_VF, split, "Tensor.split with an int split_size.",
         "split(Tensor input, SymInt split_size, int64_t dim=0) -> tuple[Tensor, ...]",
         "split(Tensor input, SymIntArrayRef split_size, int64_t dim=0) -> tuple[Tensor, ...]")
/* ---- Tensor: attributes and small methods (attrs.c) ---- */
PA_ENTRY(Tensor, is_same_size, "Whether other has the same sizes.",
         "is_same_size(Tensor other) -> bool")
PA_ENTRY(Tensor, is_pinned,
         "Whether the memory is pinned (page-locked, from the pinned allocator).",
         "is_pinned(Device? device=None) -> bool")
PA_ENTRY(Tensor, is_set_to, "Whether tensor has the same storage, offset, sizes and strides.",
         "is_set_to(Tensor tensor) -> bool")
PA_ENTRY(Tensor, requires_grad_, "self for False; True raises (pyc10 has no autograd).",
         "requires_grad_(bool requires_grad=True) -> Tensor")
PA_ENTRY(Tensor, type_as, "self with other's dtype and device (self if they match).",
         "type_as(Tensor other) -> Tensor")
/* ---- Tensor: data (data.c): fills, conversions, new_* ---- */
PA_ENTRY(Tensor, fill_, "Every element set to value (c10's overflow checks); returns self.",
         "fill_(Tensor value) -> Tensor", "fill_(Scalar value) -> Tensor")
PA_ENTRY(Tensor, to,
         "self on another device and/or dtype (self when nothing changes and copy is False).",
         "to(Device device=None, ScalarType dtype=None, bool non_blocking=False, bool copy=False, "
         "*, MemoryFormat? memory_format=None) -> Tensor",
         "to(ScalarType dtype, bool non_blocking=False, bool copy=False, *, MemoryFormat? "
         "memory_format=None) -> Tensor",
         "to(Tensor tensor, bool non_blocking=False, bool copy=False, *, MemoryFormat? "
         "memory_format=None) -> Tensor")
PA_ENTRY(Tensor, float, "self.to(pyc10.float32).",
         "float(*, MemoryFormat? memory_format=None) -> Tensor")
PA_ENTRY(Tensor, double, "self.to(pyc10.float64).",
         "double(*, MemoryFormat? memory_format=None) -> Tensor")
PA_ENTRY(Tensor, half, "self.to(pyc10.float16).",
         "half(*, MemoryFormat? memory_format=None) -> Tensor")
PA_ENTRY(Tensor, bfloat16, "self.to(pyc10.bfloat16).",
         "bfloat16(*, MemoryFormat? memory_format=None) -> Tensor")
PA_ENTRY(Tensor, int, "self.to(pyc10.int32).", "int(*, MemoryFormat? memory_format=None) -> Tensor")
PA_ENTRY(Tensor, long, "self.to(pyc10.int64).",
         "long(*, MemoryFormat? memory_format=None) -> Tensor")
PA_ENTRY(Tensor, short, "self.to(pyc10.int16).",
         "short(*, MemoryFormat? memory_format=None) -> Tensor")
PA_ENTRY(Tensor, char, "self.to(pyc10.int8).",
         "char(*, MemoryFormat? memory_format=None) -> Tensor")
PA_ENTRY(Tensor, byte, "self.to(pyc10.uint8).",
         "byte(*, MemoryFormat? memory_format=None) -> Tensor")
PA_ENTRY(Tensor, bool, "self.to(pyc10.bool).",
         "bool(*, MemoryFormat? memory_format=None) -> Tensor")
PA_ENTRY(Tensor, cfloat, "self.to(pyc10.complex64).",
         "cfloat(*, MemoryFormat? memory_format=None) -> Tensor")
PA_ENTRY(Tensor, cdouble, "self.to(pyc10.complex128).",
         "cdouble(*, MemoryFormat? memory_format=None) -> Tensor")
PA_ENTRY(Tensor, cpu, "self in host memory (self when it is there).",
         "cpu(*, MemoryFormat? memory_format=None) -> Tensor")
PA_ENTRY(Tensor, cuda, "self on a CUDA device, the current one by default (self when it is there).",
         "cuda(Device? device=None, bool non_blocking=False, *, MemoryFormat? memory_format=None) "
         "-> Tensor",
         "cuda(Device? device=None, bool async=False, *, MemoryFormat? memory_format=None) -> "
         "Tensor|deprecated")
PA_ENTRY(Tensor, type,
         "The legacy type name ('torch.FloatTensor'), or self converted to a dtype or type name.",
         "type(PyObject* dtype=None, bool non_blocking=False, *, MemoryFormat? memory_format=None) "
         "-> str | Tensor",
         "type(PyObject* dtype=None, bool async=False, *, MemoryFormat? memory_format=None) -> str "
         "| Tensor|deprecated")
PA_ENTRY(Tensor, new_empty, "An uninitialized tensor with self's dtype and device unless given.",
         "new_empty(SymIntArrayRef size, "
         "*, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? "
         "pin_memory=False, bool? requires_grad=False) -> Tensor")
PA_ENTRY(Tensor, new_zeros, "Zeros with self's dtype and device unless given.",
         "new_zeros(SymIntArrayRef size, "
         "*, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? "
         "pin_memory=False, bool? requires_grad=False) -> Tensor")
PA_ENTRY(Tensor, new_ones, "Ones with self's dtype and device unless given.",
         "new_ones(SymIntArrayRef size, "
         "*, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? "
         "pin_memory=False, bool? requires_grad=False) -> Tensor")
PA_ENTRY(Tensor, new_full, "fill_value with self's dtype and device unless given.",
         "new_full(SymIntArrayRef size, Scalar fill_value, "
         "*, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? "
         "pin_memory=False, bool? requires_grad=False) -> Tensor")
PA_ENTRY(Tensor, new_empty_strided, "new_empty with these strides.",
         "new_empty_strided(SymIntArrayRef size, SymIntArrayRef stride, "
         "*, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? "
         "pin_memory=False, bool? requires_grad=False) -> Tensor")
PA_ENTRY(Tensor, new_tensor, "A copy of data with self's dtype and device unless given.",
         "new_tensor(PyObject* data, *, ScalarType dtype=None, Device? device=None, bool "
         "requires_grad=False) -> Tensor")
/* ---- UntypedStorage (storage.c): torch's StorageBase; torch parses only __new__ and copy_ with
 * PythonArgParser (these strings are its own, with pyc10 for torch), the others by hand: their
 * signatures here are torch/storage.py's, and the methods keep torch's own checks and messages
 * for the values the parser lets through (PyObject*). ---- */
PA_ENTRY(UntypedStorage, __new__,
         "Bytes on a device: empty, of a size, or from a sequence of ints.",
         "pyc10.UntypedStorage(*, int64_t allocator=None, Device device=None)",
         "pyc10.UntypedStorage(int64_t size, *, int64_t allocator=None, Device device=None)",
         "pyc10.UntypedStorage(PyObject* sequence, *, int64_t allocator=None, Device device=None)")
PA_ENTRY(UntypedStorage, resize_, "Resize to size bytes, keeping the common prefix; returns self.",
         "resize_(PyObject* size) -> UntypedStorage")
PA_ENTRY(UntypedStorage, fill_, "Every byte set to value (an int, modulo 256); returns self.",
         "fill_(PyObject* value) -> UntypedStorage")
PA_ENTRY(UntypedStorage, copy_,
         "src's bytes (same size, any device) copied into self; returns self.",
         "copy_(Storage src, bool? non_blocking=None) -> UntypedStorage")
PA_ENTRY(UntypedStorage, from_buffer,
         "A new CPU storage holding count elements of dtype from a buffer, in byte_order.",
         "from_buffer(PyObject* buffer, std::string? byte_order=None, int64_t count=-1, "
         "int64_t offset=0, ScalarType? dtype=None) -> UntypedStorage")

/* ---- pyc10 factories (factories.c) ---- */
PA_ENTRY(pyc10, empty, "A tensor with uninitialized elements.",
         "empty(SymIntArrayRef size, *, MemoryFormat? memory_format=None, Tensor out=None, "
         "ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? "
         "pin_memory=False, bool? requires_grad=False) -> Tensor")
PA_ENTRY(
    pyc10, zeros, "A tensor of zeros.",
    "zeros(SymIntArrayRef size, *, Tensor out=None, ScalarType? dtype=None, Layout? layout=None, "
    "Device? device=None, bool? pin_memory=False, bool? requires_grad=False) -> Tensor")
PA_ENTRY(
    pyc10, ones, "A tensor of ones.",
    "ones(SymIntArrayRef size, *, Tensor out=None, ScalarType? dtype=None, Layout? layout=None, "
    "Device? device=None, bool? pin_memory=False, bool? requires_grad=False) -> Tensor")
PA_ENTRY(pyc10, full,
         "A tensor filled with fill_value; its dtype follows the value when not given.",
         "full(SymIntArrayRef size, Scalar fill_value, *, Tensor out=None, ScalarType? dtype=None, "
         "Layout? layout=None, Device? device=None, bool? pin_memory=False, bool? "
         "requires_grad=False) -> Tensor")
PA_ENTRY(pyc10, empty_like,
         "An uninitialized tensor shaped like input; preserve_format keeps its dense layout.",
         "empty_like(Tensor input, *, MemoryFormat? memory_format=None, ScalarType? dtype=None, "
         "Layout? layout=None, Device? device=None, bool? pin_memory=False, bool? "
         "requires_grad=False) -> Tensor")
PA_ENTRY(pyc10, zeros_like, "Zeros shaped like input.",
         "zeros_like(Tensor input, *, MemoryFormat? memory_format=None, ScalarType? dtype=None, "
         "Layout? layout=None, Device? device=None, bool? pin_memory=False, bool? "
         "requires_grad=False) -> Tensor")
PA_ENTRY(pyc10, ones_like, "Ones shaped like input.",
         "ones_like(Tensor input, *, MemoryFormat? memory_format=None, ScalarType? dtype=None, "
         "Layout? layout=None, Device? device=None, bool? pin_memory=False, bool? "
         "requires_grad=False) -> Tensor")
PA_ENTRY(pyc10, full_like, "fill_value shaped like input (input's dtype unless given).",
         "full_like(Tensor input, Scalar fill_value, *, MemoryFormat? memory_format=None, "
         "ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? "
         "pin_memory=False, bool? requires_grad=False) -> Tensor")
PA_ENTRY(pyc10, empty_strided, "A tensor with these sizes and strides over a fresh storage.",
         "empty_strided(SymIntArrayRef size, SymIntArrayRef stride, *, ScalarType? dtype=None, "
         "Layout? layout=None, Device? device=None, bool? pin_memory=False, bool? "
         "requires_grad=False) -> Tensor")
/* ---- indexing.c: element access (item, tolist, __array__ and the indexing slots take no
 * parser) ---- */
PA_ENTRY(Tensor, numpy, "A numpy array sharing this CPU tensor's memory (force: a copy).",
         "numpy(*, bool force=False)")
/* ---- inplace.c: in-place views, tensor_split and its kin; function forms of attrs.c's methods
 * and of real/imag/conj ---- */
PA_ENTRY(Tensor, transpose_, "transpose(dim0, dim1) in place; returns self.",
         "transpose_(int64_t dim0, int64_t dim1) -> Tensor")
PA_ENTRY(Tensor, swapdims_, "transpose_(dim0, dim1).",
         "swapdims_(int64_t dim0, int64_t dim1) -> Tensor")
PA_ENTRY(Tensor, swapaxes_, "transpose_(axis0, axis1).",
         "swapaxes_(int64_t axis0, int64_t axis1) -> Tensor")
PA_ENTRY(Tensor, squeeze_, "squeeze() in place; returns self.", "squeeze_() -> Tensor",
         "squeeze_(int64_t dim) -> Tensor", "squeeze_(IntArrayRef dim) -> Tensor")
PA_ENTRY(Tensor, unsqueeze_, "unsqueeze(dim) in place; returns self.",
         "unsqueeze_(int64_t dim) -> Tensor")
PA_ENTRY(Tensor, as_strided_, "as_strided(...) in place; returns self.",
         "as_strided_(SymIntArrayRef size, SymIntArrayRef stride, SymInt? storage_offset=None) "
         "-> Tensor")
PA_ENTRY(Tensor, resize_,
         "New sizes (contiguous strides unless unchanged), the storage grown when needed, "
         "contents kept; returns self.",
         "resize_(SymIntArrayRef size, *, MemoryFormat? memory_format=None) -> Tensor")
PA_ENTRY(Tensor, resize_as_, "resize_(the_template.shape); returns self.",
         "resize_as_(Tensor the_template, *, MemoryFormat? memory_format=None) -> Tensor")
PA_ENTRY(Tensor, set_,
         "self over another storage (or tensor's storage) with a new geometry; returns self.",
         "set_() -> Tensor", "set_(Storage source) -> Tensor",
         "set_(Storage source, SymInt storage_offset, SymIntArrayRef size, SymIntArrayRef "
         "stride=None) -> Tensor",
         "set_(Tensor source) -> Tensor",
         "set_(Tensor source, SymInt storage_offset, SymIntArrayRef size, SymIntArrayRef "
         "stride=None) -> Tensor")
PA_ENTRY(Tensor, tensor_split, "Views split at indices, or into sections of near-equal size.",
         "tensor_split(SymIntArrayRef indices, int64_t dim=0) -> tuple[Tensor, ...]",
         "tensor_split(Tensor tensor_indices_or_sections, int64_t dim=0) -> tuple[Tensor, ...]",
         "tensor_split(SymInt sections, int64_t dim=0) -> tuple[Tensor, ...]")
PA_ENTRY(Tensor, hsplit, "tensor_split along dim 1 (dim 0 of a 1-dim tensor).",
         "hsplit(int64_t sections) -> tuple[Tensor, ...]",
         "hsplit(IntArrayRef indices) -> tuple[Tensor, ...]")
PA_ENTRY(Tensor, vsplit, "tensor_split along dim 0 (at least 2 dims).",
         "vsplit(int64_t sections) -> tuple[Tensor, ...]",
         "vsplit(IntArrayRef indices) -> tuple[Tensor, ...]")
PA_ENTRY(Tensor, dsplit, "tensor_split along dim 2 (at least 3 dims).",
         "dsplit(int64_t sections) -> tuple[Tensor, ...]",
         "dsplit(IntArrayRef indices) -> tuple[Tensor, ...]")
PA_ENTRY(pyc10, tensor_split, "input.tensor_split(...).",
         "tensor_split(Tensor input, SymIntArrayRef indices, int64_t dim=0) -> tuple[Tensor, ...]",
         "tensor_split(Tensor input, Tensor tensor_indices_or_sections, int64_t dim=0) -> "
         "tuple[Tensor, ...]",
         "tensor_split(Tensor input, SymInt sections, int64_t dim=0) -> tuple[Tensor, ...]")
PA_ENTRY(pyc10, hsplit, "input.hsplit(...).",
         "hsplit(Tensor input, int64_t sections) -> tuple[Tensor, ...]",
         "hsplit(Tensor input, IntArrayRef indices) -> tuple[Tensor, ...]")
PA_ENTRY(pyc10, vsplit, "input.vsplit(...).",
         "vsplit(Tensor input, int64_t sections) -> tuple[Tensor, ...]",
         "vsplit(Tensor input, IntArrayRef indices) -> tuple[Tensor, ...]")
PA_ENTRY(pyc10, dsplit, "input.dsplit(...).",
         "dsplit(Tensor input, int64_t sections) -> tuple[Tensor, ...]",
         "dsplit(Tensor input, IntArrayRef indices) -> tuple[Tensor, ...]")
PA_ENTRY(pyc10, as_strided_, "input.as_strided_(...).",
         "as_strided_(Tensor input, SymIntArrayRef size, SymIntArrayRef stride, SymInt? "
         "storage_offset=None) -> Tensor")
PA_ENTRY(pyc10, resize_as_, "input.resize_as_(the_template).",
         "resize_as_(Tensor input, Tensor the_template, *, MemoryFormat? memory_format=None) -> "
         "Tensor")
PA_ENTRY(pyc10, ravel, "input.ravel().", "ravel(Tensor input) -> Tensor")
PA_ENTRY(pyc10, adjoint, "input.adjoint().", "adjoint(Tensor input) -> Tensor")
PA_ENTRY(pyc10, detach, "input.detach().", "detach(Tensor input) -> Tensor")
PA_ENTRY(pyc10, is_complex, "input.is_complex().", "is_complex(Tensor input) -> bool")
PA_ENTRY(pyc10, is_floating_point, "input.is_floating_point().",
         "is_floating_point(Tensor input) -> bool")
PA_ENTRY(pyc10, is_nonzero, "input.is_nonzero().", "is_nonzero(Tensor input) -> bool")
PA_ENTRY(pyc10, is_same_size, "input.is_same_size(other).",
         "is_same_size(Tensor input, Tensor other) -> bool")
PA_ENTRY(pyc10, is_signed, "input.is_signed().", "is_signed(Tensor input) -> bool")
PA_ENTRY(pyc10, get_device, "input.get_device().", "get_device(Tensor input) -> int")
PA_ENTRY(pyc10, real, "input.real.", "real(Tensor input) -> Tensor")
PA_ENTRY(pyc10, imag, "input.imag.", "imag(Tensor input) -> Tensor")
PA_ENTRY(pyc10, conj, "input.conj().", "conj(Tensor input) -> Tensor")
PA_ENTRY(pyc10, tensor, "A new tensor holding a copy of data (nested numbers, arrays, tensors).",
         "tensor(PyObject* data, *, ScalarType dtype=None, Device? device=None, bool "
         "pin_memory=False, bool requires_grad=False) -> Tensor")
PA_ENTRY(pyc10, as_tensor, "data as a tensor, sharing its memory where dtype and device allow.",
         "as_tensor(PyObject* data, *, ScalarType dtype=None, Device? device=None) -> Tensor")

/* ---- pyc10: factories and data movement (torch parity) ---- */
PA_ENTRY(pyc10, arange,
         "The values start, start + step, ... below end (int64 when all are integers).",
         "arange(Scalar end, *, Tensor out=None, ScalarType? dtype=None, Layout? layout=None, "
         "Device? device=None, bool? pin_memory=False, bool? requires_grad=False) -> Tensor",
         "arange(Scalar start, Scalar end, *, ScalarType? dtype=None, Layout? layout=None, "
         "Device? device=None, bool? pin_memory=False, bool? requires_grad=False) -> Tensor",
         "arange(Scalar start, Scalar end, Scalar step=1, *, Tensor out=None, ScalarType? "
         "dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=False, bool? "
         "requires_grad=False) -> Tensor")
PA_ENTRY(pyc10, cat, "tensors joined along dim (promoted to their result_type).",
         "cat(TensorList tensors, int64_t dim=0, *, Tensor out=None) -> Tensor")
PA_ENTRY(pyc10, concat, "cat(tensors, dim).",
         "concat(TensorList tensors, int64_t dim=0, *, Tensor out=None) -> Tensor")
PA_ENTRY(pyc10, concatenate, "cat(tensors, dim).",
         "concatenate(TensorList tensors, int64_t dim=0, *, Tensor out=None) -> Tensor")
PA_ENTRY(pyc10, stack, "tensors of equal shape joined along a new dimension dim.",
         "stack(TensorList tensors, int64_t dim=0, *, Tensor out=None) -> Tensor")
PA_ENTRY(pyc10, result_type, "The dtype an operation on the two arguments would give.",
         "result_type(Tensor tensor, Tensor other) -> dtype",
         "result_type(Scalar scalar, Tensor tensor) -> dtype",
         "result_type(Tensor tensor, Scalar other) -> dtype",
         "result_type(Scalar scalar1, Scalar scalar2) -> dtype")
PA_ENTRY(pyc10, promote_types, "The smallest dtype both can be cast to (c10's promotion).",
         "promote_types(ScalarType type1, ScalarType type2) -> dtype")
PA_ENTRY(pyc10, can_cast, "Whether torch's casting rules allow from_ to to.",
         "can_cast(ScalarType from_, ScalarType to) -> bool")
PA_ENTRY(pyc10, view_as_real, "A complex tensor's memory as real pairs in a new last dim.",
         "view_as_real(Tensor input) -> Tensor")
PA_ENTRY(pyc10, view_as_complex, "A last dim of size 2 viewed as complex numbers.",
         "view_as_complex(Tensor input) -> Tensor")
PA_ENTRY(pyc10, frombuffer, "A 1-dim CPU tensor over a buffer's memory (zero-copy).",
         "frombuffer(PyObject* buffer, *, ScalarType dtype, int64_t count=-1, int64_t offset=0, "
         "bool requires_grad=False) -> Tensor")
PA_ENTRY(
    pyc10, from_file, "A 1-dim CPU tensor over a memory-mapped file.",
    "from_file(std::string filename, bool? shared=None, int64_t? size=0, *, "
    "ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=False, "
    "bool? requires_grad=False) -> Tensor")
PA_ENTRY(pyc10, asarray,
         "obj as a tensor: sharing its memory where it can (tensors, arrays, DLPack, buffers).",
         "asarray(PyObject* obj, *, ScalarType? dtype=None, Device? device=None, bool? copy=None, "
         "bool? requires_grad=None) -> Tensor")

/* ---- torch.device's overloads (THPDevice_pynew): pyc10.device binds its arguments in Python,
 * and a call neither overload takes gets the parser's error (_ctensor._device_error) ---- */
PA_ENTRY(device, device, "A device from a device, a device string, or a type and an index.",
         "device(Device device)", "device(c10::string_view type, int64_t? index=-1)")
