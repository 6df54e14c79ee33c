package c10c_test

import (
	"errors"
	"os"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	c10c "github.com/c10c/c10c-go"
	"github.com/c10c/c10c-go/raw"
)

// must returns v, panicking (which fails the test) on an error.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestRawCoversEveryFunction(t *testing.T) {
	exported := 0 // the functions lib/libc10c.map exports, one per line: "c10c_x;"
	mapText, err := os.ReadFile("../../lib/libc10c.map")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(mapText), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "c10c_") && strings.HasSuffix(line, ";") {
			exported++
		}
	}
	if len(raw.Functions) != raw.FunctionCount || raw.FunctionCount != exported {
		t.Fatalf("%d wrappers for %d functions, the map exports %d", len(raw.Functions),
			raw.FunctionCount, exported)
	}
	if len(raw.Unsupported) != 0 {
		t.Fatalf("unsupported: %v", raw.Unsupported)
	}
	if bad := raw.LayoutMismatches(); len(bad) != 0 {
		t.Fatalf("struct mirrors whose size differs from C: %v", bad)
	}
	if got := raw.AbiVersion(); got != raw.C10C_ABI_VERSION {
		t.Fatalf("library ABI %#x, headers %#x", got, raw.C10C_ABI_VERSION)
	}
}

func TestErrorCarriesStatusAndMessage(t *testing.T) {
	x := must(c10c.Empty([]int64{2, 3}, c10c.Float32, c10c.CPU))
	defer x.Close()
	v, err := x.Transpose(0, 5)
	if v != nil || err == nil {
		t.Fatal("transpose(0, 5) of a 2-dim tensor succeeded")
	}
	var e *c10c.Error
	if !errors.As(err, &e) {
		t.Fatalf("%T is not *c10c.Error", err)
	}
	if e.Status != c10c.StatusIndexOutOfRange || e.Status.Name() != "C10C_STATUS_INDEX_OUT_OF_RANGE" {
		t.Fatalf("status %d %s", e.Status, e.Status.Name())
	}
	want := "Dimension out of range (expected to be in range of [-2, 1], but got 5)"
	if e.Message != want {
		t.Fatalf("message %q, want %q", e.Message, want)
	}
	if err.Error() != "C10C_STATUS_INDEX_OUT_OF_RANGE: "+want {
		t.Fatalf("Error() = %q", err.Error())
	}
	// creation errors too
	_, err = c10c.Empty([]int64{-1}, c10c.Float32, c10c.CPU)
	if !errors.As(err, &e) || e.Status != c10c.StatusError ||
		e.Message != "Trying to create tensor with negative dimension -1: [-1]" {
		t.Fatalf("negative size: %v", err)
	}
	_, err = c10c.ParseDType("float33")
	if !errors.As(err, &e) {
		t.Fatalf("ParseDType: %v", err)
	}
}

func TestErrorMessageOnManyGoroutines(t *testing.T) {
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			x, err := c10c.Empty([]int64{2, 3}, c10c.Float32, c10c.CPU)
			if err != nil {
				t.Error(err)
				return
			}
			defer x.Close()
			for i := 0; i < 2000; i++ {
				_, err := x.Select(1, int64(3+g))
				var e *c10c.Error
				if !errors.As(err, &e) || !strings.Contains(e.Message, "index "+itoa(3+g)+" out of range") {
					t.Errorf("goroutine %d: %v", g, err)
					return
				}
			}
		}(g)
	}
	wg.Wait()
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestUseAfterCloseIsAnError(t *testing.T) {
	x := must(c10c.Empty([]int64{2, 3}, c10c.Float32, c10c.CPU))
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	if err := x.Close(); err != nil { // double Close is harmless
		t.Fatal(err)
	}
	if !x.Closed() {
		t.Fatal("not closed")
	}
	_, err := x.Transpose(0, 1)
	if !errors.Is(err, c10c.ErrClosed) || !strings.Contains(err.Error(), "Tensor.Transpose") {
		t.Fatalf("Transpose after Close: %v", err)
	}
	if _, err := x.Float32s(); !errors.Is(err, c10c.ErrClosed) {
		t.Fatalf("Float32s after Close: %v", err)
	}
	if _, err := x.ToDLPack(); !errors.Is(err, c10c.ErrClosed) {
		t.Fatalf("ToDLPack after Close: %v", err)
	}
	if _, err := x.Storage(); !errors.Is(err, c10c.ErrClosed) {
		t.Fatalf("Storage after Close: %v", err)
	}
	if _, err := x.Size(0); !errors.Is(err, c10c.ErrClosed) {
		t.Fatalf("Size after Close: %v", err)
	}
	if x.Sizes() != nil || x.Numel() != 0 || x.Dim() != 0 || x.DataPtr() != nil || x.IsContiguous() {
		t.Fatal("getters of a closed tensor do not return zero values")
	}
	if x.String() != "Tensor(closed)" {
		t.Fatal(x.String())
	}
	var nilT *c10c.Tensor
	if _, err := nilT.View(6); !errors.Is(err, c10c.ErrClosed) || nilT.Close() != nil {
		t.Fatal("nil tensor")
	}
	s := must(c10c.NewStorage(16, c10c.DeviceCPU))
	s.Close()
	s.Close()
	if _, err := s.Bytes(); !errors.Is(err, c10c.ErrClosed) {
		t.Fatalf("Storage.Bytes after Close: %v", err)
	}
}

func liveCPU(t *testing.T) int64 {
	t.Helper()
	n, err := c10c.CPULiveAllocations()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestFinalizerReleasesUnclosedTensor(t *testing.T) {
	runtime.GC()
	before := liveCPU(t)
	func() {
		for i := 0; i < 10; i++ {
			x, err := c10c.Empty([]int64{1024}, c10c.Float32, c10c.CPU)
			if err != nil {
				t.Fatal(err)
			}
			_ = x // never closed
		}
	}()
	if liveCPU(t) < before+10 {
		t.Fatalf("expected 10 more live allocations than %d, have %d", before, liveCPU(t))
	}
	deadline := time.Now().Add(10 * time.Second)
	for liveCPU(t) != before {
		if time.Now().After(deadline) {
			t.Fatalf("live allocations %d, want %d after GC", liveCPU(t), before)
		}
		runtime.GC()
		time.Sleep(5 * time.Millisecond)
	}
}

func TestDTypeAndDevice(t *testing.T) {
	if c10c.Float32.String() != "float32" || c10c.Float32.ItemSize() != 4 || c10c.Int64.ItemSize() != 8 {
		t.Fatal(c10c.Float32.String(), c10c.Float32.ItemSize())
	}
	if c10c.Bool.String() != "bool" || c10c.BFloat16.String() != "bfloat16" {
		t.Fatal(c10c.Bool, c10c.BFloat16)
	}
	if d := must(c10c.ParseDType("float64")); d != c10c.Float64 || !d.IsFloatingPoint() || d.IsComplex() {
		t.Fatal(d)
	}
	if c10c.DTypeOf[float32]() != c10c.Float32 || c10c.DTypeOf[int64]() != c10c.Int64 || c10c.DTypeOf[bool]() != c10c.Bool {
		t.Fatal("DTypeOf")
	}
	if c10c.CPU.String() != "cpu" || c10c.DeviceCUDA.String() != "cuda" || c10c.Meta.String() != "meta" {
		t.Fatal(c10c.CPU, c10c.DeviceCUDA, c10c.Meta)
	}
	d := must(c10c.ParseDevice("cuda:1"))
	if d != (c10c.Device{Type: c10c.DeviceCUDA, Index: 1}) || d.String() != "cuda:1" {
		t.Fatal(d)
	}
	if _, err := c10c.ParseDevice("nope:1"); err == nil {
		t.Fatal("parsed nope:1")
	}
	if c10c.Contiguous.String() == "" || !c10c.DeviceMeta.Valid() || c10c.DeviceType(99).Valid() {
		t.Fatal("memory format / device type")
	}
	x := must(c10c.Empty([]int64{2}, c10c.Int32, c10c.Device{Type: c10c.DeviceCPU, Index: 0}))
	defer x.Close()
	if x.DType() != c10c.Int32 || x.Device() != c10c.CPU {
		t.Fatal(x)
	}
}

func TestViewsAndMetadata(t *testing.T) {
	x := must(c10c.Empty([]int64{4, 6}, c10c.Float32, c10c.CPU))
	defer x.Close()
	if !reflect.DeepEqual(x.Sizes(), []int64{4, 6}) || !reflect.DeepEqual(x.Strides(), []int64{6, 1}) ||
		x.Dim() != 2 || x.Numel() != 24 || x.NBytes() != 96 || x.ItemSize() != 4 || !x.IsContiguous() {
		t.Fatal(x)
	}
	check := func(name string, v *c10c.Tensor, err error, sizes, strides []int64, off int64) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		defer v.Close()
		if !reflect.DeepEqual(v.Sizes(), sizes) || !reflect.DeepEqual(v.Strides(), strides) || v.StorageOffset() != off {
			t.Fatalf("%s: %v", name, v)
		}
	}
	v, err := x.Transpose(0, 1)
	check("transpose", v, err, []int64{6, 4}, []int64{1, 6}, 0)
	v, err = x.Narrow(1, 2, 3)
	check("narrow", v, err, []int64{4, 3}, []int64{6, 1}, 2)
	v, err = x.Select(0, 1)
	check("select", v, err, []int64{6}, []int64{1}, 6)
	v, err = x.View(3, -1, 2)
	check("view", v, err, []int64{3, 4, 2}, []int64{8, 2, 1}, 0)
	v, err = x.Reshape(24)
	check("reshape", v, err, []int64{24}, []int64{1}, 0)
	v, err = x.Unsqueeze(0)
	check("unsqueeze", v, err, []int64{1, 4, 6}, []int64{24, 6, 1}, 0)
	v, err = x.Slice(1, 1, 6, 2)
	check("slice", v, err, []int64{4, 3}, []int64{6, 2}, 1)
	v, err = x.AsStrided([]int64{2, 2}, []int64{1, 3}, 5)
	check("as_strided", v, err, []int64{2, 2}, []int64{1, 3}, 5)
	v, err = x.Diagonal(1, 0, 1)
	check("diagonal", v, err, []int64{4}, []int64{7}, 1)
	v, err = x.Unfold(1, 2, 2)
	check("unfold", v, err, []int64{4, 3, 2}, []int64{6, 2, 1}, 0)
	v, err = x.Flatten(0, 1)
	check("flatten", v, err, []int64{24}, []int64{1}, 0)
	v, err = x.Unflatten(1, 2, 3)
	check("unflatten", v, err, []int64{4, 2, 3}, []int64{6, 3, 1}, 0)
	v, err = x.Movedim([]int64{0}, []int64{1})
	check("movedim", v, err, []int64{6, 4}, []int64{1, 6}, 0)
	v, err = x.Permute(1, 0)
	check("permute", v, err, []int64{6, 4}, []int64{1, 6}, 0)
	v, err = x.ViewDType(c10c.Int32)
	check("view_dtype", v, err, []int64{4, 6}, []int64{6, 1}, 0)
	y := must(c10c.Empty([]int64{4, 1}, c10c.Float32, c10c.CPU))
	defer y.Close()
	v, err = y.Expand(4, 5)
	check("expand", v, err, []int64{4, 5}, []int64{1, 0}, 0)
	v, err = y.Squeeze()
	check("squeeze", v, err, []int64{4}, []int64{1}, 0)
	v, err = y.SqueezeDims(0, 1)
	check("squeeze_dims", v, err, []int64{4}, []int64{1}, 0)
	tr := must(x.Transpose(0, 1))
	defer tr.Close()
	if tr.IsContiguous() {
		t.Fatal("transpose is contiguous")
	}
	if n, err := tr.Size(-1); err != nil || n != 4 {
		t.Fatal(n, err)
	}
	// a view keeps the storage alive after its base is closed
	s := must(tr.Storage())
	defer s.Close()
	if s.NBytes() != 96 || s.UseCount() < 1 || s.Device() != c10c.CPU {
		t.Fatal(s.NBytes(), s.UseCount())
	}
}

func TestDataAccess(t *testing.T) {
	x := must(c10c.FromFloat32s([]float32{0, 1, 2, 3, 4, 5}, 2, 3))
	defer x.Close()
	d := must(x.Float32s())
	if !reflect.DeepEqual(d, []float32{0, 1, 2, 3, 4, 5}) {
		t.Fatal(d)
	}
	d[4] = 40 // writes go to the tensor's memory
	row := must(x.Select(0, 1))
	defer row.Close()
	if r := must(row.Float32s()); !reflect.DeepEqual(r, []float32{3, 40, 5}) {
		t.Fatal(r)
	}
	tr := must(x.Transpose(0, 1))
	defer tr.Close()
	if _, err := tr.Float32s(); err == nil || !strings.Contains(err.Error(), "not contiguous") {
		t.Fatalf("non-contiguous data: %v", err)
	}
	c := must(tr.Contiguous())
	defer c.Close()
	if r := must(c.Float32s()); !reflect.DeepEqual(r, []float32{0, 3, 1, 40, 2, 5}) {
		t.Fatal(r)
	}
	if _, err := x.Int64s(); err == nil {
		t.Fatal("int64 view of float32 data")
	}
	b := must(x.Bytes())
	if len(b) != 24 {
		t.Fatal(len(b))
	}
	z := must(c10c.Zeros([]int64{3}, c10c.Float64, c10c.CPU))
	defer z.Close()
	if r := must(z.Float64s()); !reflect.DeepEqual(r, []float64{0, 0, 0}) {
		t.Fatal(r)
	}
	if err := c10c.Fill(z, 2.5); err != nil {
		t.Fatal(err)
	}
	if r := must(z.Float64s()); !reflect.DeepEqual(r, []float64{2.5, 2.5, 2.5}) {
		t.Fatal(r)
	}
	f := must(c10c.Full([]int64{2}, int64(7)))
	defer f.Close()
	if r := must(f.Int64s()); !reflect.DeepEqual(r, []int64{7, 7}) {
		t.Fatal(r)
	}
	dst := must(c10c.Empty([]int64{2}, c10c.Float64, c10c.CPU))
	defer dst.Close()
	if err := dst.CopyFrom(f); err != nil {
		t.Fatal(err)
	}
	if r := must(dst.Float64s()); !reflect.DeepEqual(r, []float64{7, 7}) {
		t.Fatal(r)
	}
	if err := dst.Zero(); err != nil {
		t.Fatal(err)
	}
	m := must(c10c.Empty([]int64{2, 2}, c10c.Float32, c10c.Meta))
	defer m.Close()
	if m.DataPtr() != nil || m.Device() != c10c.Meta {
		t.Fatal("meta tensor has data")
	}
	if _, err := m.Float32s(); err == nil {
		t.Fatal("meta data")
	}
	st := must(c10c.NewStorage(64, c10c.DeviceCPU))
	defer st.Close()
	over := must(st.NewTensor([]int64{2, 2}, []int64{2, 1}, 4, c10c.Int32))
	defer over.Close()
	if over.StorageOffset() != 4 || must(st.Bytes()) == nil {
		t.Fatal(over)
	}
	_, err := st.NewTensor([]int64{100}, []int64{1}, 0, c10c.Int32)
	var e *c10c.Error
	if !errors.As(err, &e) || e.Status != c10c.StatusError {
		t.Fatalf("out of bounds tensor: %v", err)
	}
}

func TestDLPackOutAndIn(t *testing.T) {
	before := liveCPU(t)
	x := must(c10c.FromFloat32s([]float32{0, 1, 2, 3, 4, 5}, 2, 3))
	exp := must(x.ToDLPack())
	w := must(exp.WatchDeleter())
	if !reflect.DeepEqual(exp.Shape(), []int64{2, 3}) || !reflect.DeepEqual(exp.Strides(), []int64{3, 1}) {
		t.Fatal(exp.Shape(), exp.Strides())
	}
	if dt := exp.DataType(); dt.Code != raw.KDLFloat || dt.Bits != 32 || dt.Lanes != 1 {
		t.Fatal(dt)
	}
	if dev := exp.DLDevice(); dev.DeviceType != raw.KDLCPU {
		t.Fatal(dev)
	}
	if exp.Data() != x.DataPtr() || exp.Flags()&raw.C10C_DLPACK_FLAG_BITMASK_READ_ONLY != 0 {
		t.Fatal("export data")
	}
	expData := exp.Data()
	x.Close() // the export keeps the memory alive
	y := must(c10c.FromDLPack(exp))
	if y.DataPtr() != expData || exp.Managed() != nil {
		t.Fatal("import does not share the export's memory, or the export was not consumed")
	}
	if r := must(y.Float32s()); !reflect.DeepEqual(r, []float32{0, 1, 2, 3, 4, 5}) {
		t.Fatal(r)
	}
	if _, err := c10c.FromDLPack(exp); !errors.Is(err, c10c.ErrClosed) {
		t.Fatalf("second import: %v", err)
	}
	exp.Close() // consumed: nothing to do
	if w.Calls() != 0 {
		t.Fatal("deleter ran early")
	}
	y.Close()
	if w.Calls() != 1 {
		t.Fatalf("deleter ran %d times", w.Calls())
	}
	if liveCPU(t) != before {
		t.Fatalf("live allocations %d, want %d", liveCPU(t), before)
	}

	// an export that nobody imports: Close calls the deleter, once
	z := must(c10c.Zeros([]int64{4}, c10c.Int64, c10c.CPU))
	e2 := must(z.ToDLPack())
	w2 := must(e2.WatchDeleter())
	z.Close()
	e2.Close()
	e2.Close()
	if w2.Calls() != 1 || liveCPU(t) != before {
		t.Fatalf("deleter ran %d times; live %d, want %d", w2.Calls(), liveCPU(t), before)
	}
}

func TestReleaseOnAnotherOSThread(t *testing.T) {
	before := liveCPU(t)
	ch := make(chan *c10c.Tensor, 16)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		defer close(ch)
		for i := 0; i < 500; i++ {
			x, err := c10c.Empty([]int64{8}, c10c.Float32, c10c.CPU)
			if err != nil {
				t.Error(err)
				return
			}
			ch <- x
		}
	}()
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		for x := range ch {
			x.Close()
		}
		close(done)
	}()
	<-done
	if got := liveCPU(t); got != before {
		t.Fatalf("live allocations %d, want %d", got, before)
	}
}

// A create/view/release cycle allocates the two Tensor objects (the C call writes the handle
// straight into them) plus the small argument frames that cgo moves to the heap for calls with
// pointer arguments (before Go 1.22's #cgo noescape): 5 with Go 1.19. A regression guard.
func TestCycleAllocations(t *testing.T) {
	shape := []int64{2, 3}
	allocs := testing.AllocsPerRun(1000, func() {
		x, err := c10c.Empty(shape, c10c.Float32, c10c.CPU)
		if err != nil {
			panic(err)
		}
		v, err := x.Transpose(0, 1)
		if err != nil {
			panic(err)
		}
		v.Close()
		x.Close()
	})
	if allocs > 6 {
		t.Fatalf("%v Go allocations per create/view/release cycle, want at most 6", allocs)
	}
}
