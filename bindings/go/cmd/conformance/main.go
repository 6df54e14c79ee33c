// Command conformance runs bindings/conformance/cases.json through the Go binding's public API
// and prints one line per case group ("conformance go: views 12/12"); it exits 1 on any miss.
//
//	go run ./cmd/conformance [-cases path/to/cases.json]
//
// C10C_CONFORMANCE_CYCLES lowers the cycles group's count for a quick local run.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	c10c "github.com/c10c/c10c-go"
)

type base struct {
	Shape []int64 `json:"shape"`
	DType string  `json:"dtype"`
}

type viewCase struct {
	Base          base                       `json:"base"`
	Op            string                     `json:"op"`
	Args          map[string]json.RawMessage `json:"args"`
	Sizes         []int64                    `json:"sizes"`
	Strides       []int64                    `json:"strides"`
	StorageOffset int64                      `json:"storage_offset"`
	Status        string                     `json:"status"`
	Message       string                     `json:"message"`
}

type cases struct {
	Reference string `json:"reference"`
	Cycles    struct {
		Count          int      `json:"count"`
		Warmup         int      `json:"warmup"`
		Base           base     `json:"base"`
		View           viewCase `json:"view"`
		RSSGrowthLimit int64    `json:"rss_growth_limit_bytes"`
	} `json:"cycles"`
	Views  []viewCase `json:"views"`
	Errors []viewCase `json:"errors"`
	DLPack struct {
		Shape  []int64   `json:"shape"`
		DType  string    `json:"dtype"`
		Values []float64 `json:"values"`
	} `json:"dlpack"`
	Release struct {
		Count int     `json:"count"`
		Shape []int64 `json:"shape"`
		DType string  `json:"dtype"`
	} `json:"release_on_other_thread"`
}

func i64(args map[string]json.RawMessage, name string) int64 {
	var v int64
	if err := json.Unmarshal(args[name], &v); err != nil {
		panic(fmt.Sprintf("argument %q: %v", name, err))
	}
	return v
}

func i64s(args map[string]json.RawMessage, name string) []int64 {
	var v []int64
	if err := json.Unmarshal(args[name], &v); err != nil {
		panic(fmt.Sprintf("argument %q: %v", name, err))
	}
	return v
}

// apply runs a case's op on t through the public API.
func apply(t *c10c.Tensor, op string, a map[string]json.RawMessage) (*c10c.Tensor, error) {
	switch op {
	case "narrow":
		return t.Narrow(i64(a, "dim"), i64(a, "start"), i64(a, "length"))
	case "transpose":
		return t.Transpose(i64(a, "dim0"), i64(a, "dim1"))
	case "select":
		return t.Select(i64(a, "dim"), i64(a, "index"))
	case "permute":
		return t.Permute(i64s(a, "dims")...)
	case "view":
		return t.View(i64s(a, "shape")...)
	case "reshape":
		return t.Reshape(i64s(a, "shape")...)
	case "unsqueeze":
		return t.Unsqueeze(i64(a, "dim"))
	case "squeeze":
		if _, ok := a["dims"]; ok {
			return t.SqueezeDims(i64s(a, "dims")...)
		}
		return t.Squeeze()
	case "expand":
		return t.Expand(i64s(a, "sizes")...)
	case "slice":
		return t.Slice(i64(a, "dim"), i64(a, "start"), i64(a, "end"), i64(a, "step"))
	case "as_strided":
		if _, ok := a["storage_offset"]; ok {
			return t.AsStrided(i64s(a, "sizes"), i64s(a, "strides"), i64(a, "storage_offset"))
		}
		return t.AsStridedKeepOffset(i64s(a, "sizes"), i64s(a, "strides"))
	case "diagonal":
		return t.Diagonal(i64(a, "offset"), i64(a, "dim1"), i64(a, "dim2"))
	case "unfold":
		return t.Unfold(i64(a, "dim"), i64(a, "size"), i64(a, "step"))
	case "flatten":
		return t.Flatten(i64(a, "start_dim"), i64(a, "end_dim"))
	case "unflatten":
		return t.Unflatten(i64(a, "dim"), i64s(a, "sizes")...)
	case "movedim":
		return t.Movedim(i64s(a, "source"), i64s(a, "destination"))
	}
	return nil, fmt.Errorf("unknown op %q", op)
}

func makeBase(b base) (*c10c.Tensor, error) {
	dt, err := c10c.ParseDType(b.DType)
	if err != nil {
		return nil, err
	}
	return c10c.Empty(b.Shape, dt, c10c.CPU)
}

func rss() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "VmRSS:") {
			fields := strings.Fields(line)
			kb, _ := strconv.ParseInt(fields[1], 10, 64)
			return kb * 1024
		}
	}
	return -1
}

type group struct {
	name        string
	detail      string
	pass, total int
	notes       []string
}

func (g *group) check(ok bool, format string, args ...any) {
	g.total++
	if ok {
		g.pass++
	} else {
		g.notes = append(g.notes, fmt.Sprintf(format, args...))
	}
}

func runViews(cs []viewCase) *group {
	g := &group{name: "views"}
	for i, c := range cs {
		t, err := makeBase(c.Base)
		if err != nil {
			g.check(false, "case %d (%s): base: %v", i, c.Op, err)
			continue
		}
		v, err := apply(t, c.Op, c.Args)
		if err != nil {
			g.check(false, "case %d (%s): %v", i, c.Op, err)
			t.Close()
			continue
		}
		got := fmt.Sprint(v.Sizes(), v.Strides(), v.StorageOffset())
		want := fmt.Sprint(c.Sizes, c.Strides, c.StorageOffset)
		g.check(reflect.DeepEqual(v.Sizes(), c.Sizes) && reflect.DeepEqual(v.Strides(), c.Strides) &&
			v.StorageOffset() == c.StorageOffset, "case %d (%s): got %s, want %s", i, c.Op, got, want)
		v.Close()
		t.Close()
	}
	return g
}

func runErrors(cs []viewCase) *group {
	g := &group{name: "errors"}
	for i, c := range cs {
		t, err := makeBase(c.Base)
		if err != nil {
			g.check(false, "case %d (%s): base: %v", i, c.Op, err)
			continue
		}
		v, err := apply(t, c.Op, c.Args)
		var e *c10c.Error
		switch {
		case err == nil:
			v.Close()
			g.check(false, "case %d (%s): no error", i, c.Op)
		case !errors.As(err, &e):
			g.check(false, "case %d (%s): not a *c10c.Error: %v", i, c.Op, err)
		default:
			g.check(e.Status.Name() == c.Status && e.Message == c.Message,
				"case %d (%s): got %s %q, want %s %q", i, c.Op, e.Status.Name(), e.Message, c.Status, c.Message)
		}
		t.Close()
	}
	return g
}

func runDLPack(c cases) *group {
	g := &group{name: "dlpack"}
	d := c.DLPack
	fail := func(step string, err error) *group {
		g.check(false, "%s: %v", step, err)
		return g
	}
	if d.DType != "float32" {
		return fail("dtype", fmt.Errorf("the runner fills float32 only, not %s", d.DType))
	}
	vals := make([]float32, len(d.Values))
	for i, v := range d.Values {
		vals[i] = float32(v)
	}
	t, err := c10c.FromFloat32s(vals, d.Shape...)
	if err != nil {
		return fail("make", err)
	}
	exp, err := t.ToDLPack()
	if err != nil {
		return fail("export", err)
	}
	watch, err := exp.WatchDeleter()
	if err != nil {
		return fail("watch", err)
	}
	expData := exp.Data()
	t.Close() // the export keeps the memory
	g.check(reflect.DeepEqual(exp.Shape(), d.Shape), "export shape %v, want %v", exp.Shape(), d.Shape)
	imp, err := c10c.FromDLPack(exp)
	if err != nil {
		return fail("import", err)
	}
	g.check(imp.DataPtr() == expData, "import data %p, export data %p", imp.DataPtr(), expData)
	g.check(reflect.DeepEqual(imp.Sizes(), d.Shape), "import sizes %v, want %v", imp.Sizes(), d.Shape)
	got, err := imp.Float32s()
	g.check(err == nil && reflect.DeepEqual(got, vals), "import values %v (%v), want %v", got, err, vals)
	view, err := imp.Transpose(0, -1)
	if err != nil {
		return fail("view of import", err)
	}
	imp.Close()
	g.check(watch.Calls() == 0, "deleter ran %d times while a view is open", watch.Calls())
	exp.Close() // consumed by the import: must not call the deleter again
	view.Close()
	g.check(watch.Calls() == 1, "deleter ran %d times after the last release, want 1", watch.Calls())
	return g
}

func runRelease(c cases) *group {
	g := &group{name: "release_on_other_thread"}
	r := c.Release
	dt, err := c10c.ParseDType(r.DType)
	if err != nil {
		g.check(false, "dtype: %v", err)
		return g
	}
	before, err := c10c.CPULiveAllocations()
	if err != nil {
		g.check(false, "stats: %v", err)
		return g
	}
	ch := make(chan *c10c.Tensor, 64)
	makerTID := make(chan int, 1)
	releaserTID := make(chan int, 1)
	errs := make(chan error, 2)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		makerTID <- gettid()
		defer close(ch)
		for i := 0; i < r.Count; i++ {
			t, err := c10c.Empty(r.Shape, dt, c10c.CPU)
			if err != nil {
				errs <- err
				return
			}
			ch <- t
		}
		errs <- nil
	}()
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		releaserTID <- gettid()
		for t := range ch {
			if err := t.Close(); err != nil {
				errs <- err
			}
		}
		close(done)
	}()
	<-done
	g.check(<-errs == nil, "making tensors failed")
	mt, rt := <-makerTID, <-releaserTID
	g.check(mt != rt, "maker and releaser ran on the same OS thread %d", mt)
	after, err := c10c.CPULiveAllocations()
	g.check(err == nil && after == before, "live CPU allocations %d before, %d after (%v)", before, after, err)
	return g
}

func gettid() int { return syscallGettid() }

func runCycles(c cases) *group {
	g := &group{name: "cycles"}
	cy := c.Cycles
	count := cy.Count
	if s := os.Getenv("C10C_CONFORMANCE_CYCLES"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			g.check(false, "C10C_CONFORMANCE_CYCLES=%q is not a count", s)
			return g
		}
		if n < count {
			count = n
		}
	}
	dt, err := c10c.ParseDType(cy.Base.DType)
	if err != nil {
		g.check(false, "dtype: %v", err)
		return g
	}
	shape := cy.Base.Shape
	cycle := func() error {
		t, err := c10c.Empty(shape, dt, c10c.CPU)
		if err != nil {
			return err
		}
		v, err := apply(t, cy.View.Op, cy.View.Args)
		if err != nil {
			t.Close()
			return err
		}
		v.Close()
		t.Close()
		return nil
	}
	// The op's arguments are decoded once, not per cycle: the hot loop calls the API only.
	if cy.View.Op == "transpose" {
		d0, d1 := i64(cy.View.Args, "dim0"), i64(cy.View.Args, "dim1")
		cycle = func() error {
			t, err := c10c.Empty(shape, dt, c10c.CPU)
			if err != nil {
				return err
			}
			v, err := t.Transpose(d0, d1)
			if err != nil {
				t.Close()
				return err
			}
			v.Close()
			t.Close()
			return nil
		}
	}
	// The Go heap's minimum GC target is 4 MiB (GOGC=100): left alone, the heap of a binding
	// that allocates a few bytes per cycle is still growing towards it after the warm-up, which
	// VmRSS would count as growth. GOGC=10 during the cycles keeps that target at 0.4 MiB, so the
	// reading shows what is really kept: C memory and reachable Go objects.
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	// One P (GOMAXPROCS=1) and one OS thread run the cycles, as a program's loop on one thread
	// would. Each P keeps a private cache of up to 512 KiB of free heap pages that the Go runtime
	// never returns to the OS (FreeOSMemory skips it); with several Ps, the pages those caches
	// touch during the cycles are VmRSS growth that is no leak. The goroutine stays on one OS
	// thread, so the library's per-thread block caches are those of that one thread.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := time.Now()
	for i := 0; i < cy.Warmup; i++ {
		if err := cycle(); err != nil {
			g.check(false, "warmup cycle %d: %v", i, err)
			return g
		}
	}
	// Garbage is returned to the OS before each reading, so that VmRSS counts what is live (C
	// memory and reachable Go objects) and not the Go heap's growth towards its GC target.
	debug.FreeOSMemory()
	r0 := rss()
	for i := 0; i < count; i++ {
		if err := cycle(); err != nil {
			g.check(false, "cycle %d: %v", i, err)
			return g
		}
	}
	debug.FreeOSMemory()
	r1 := rss()
	el := time.Since(start)
	g.detail = fmt.Sprintf(" (%d cycles in %.2fs, VmRSS %+d bytes)", count, el.Seconds(), r1-r0)
	g.check(r0 > 0 && r1-r0 < cy.RSSGrowthLimit, "VmRSS grew by %d bytes (limit %d)", r1-r0, cy.RSSGrowthLimit)
	return g
}

func defaultCases() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "cases.json"
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "conformance", "cases.json")
}

func main() {
	path := flag.String("cases", defaultCases(), "path to bindings/conformance/cases.json")
	flag.Parse()
	b, err := os.ReadFile(*path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "conformance go:", err)
		os.Exit(2)
	}
	var c cases
	if err := json.Unmarshal(b, &c); err != nil {
		fmt.Fprintln(os.Stderr, "conformance go:", err)
		os.Exit(2)
	}
	groups := []*group{runCycles(c), runViews(c.Views), runErrors(c.Errors), runDLPack(c), runRelease(c)}
	failed := false
	for _, g := range groups {
		fmt.Printf("conformance go: %s %d/%d%s\n", g.name, g.pass, g.total, g.detail)
		for _, n := range g.notes {
			fmt.Printf("  MISS %s\n", n)
		}
		if g.pass != g.total || g.total == 0 {
			failed = true
		}
	}
	if failed {
		os.Exit(1)
	}
}
