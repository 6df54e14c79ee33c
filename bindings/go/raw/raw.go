// Package raw is the low-level Go binding of libc10c: one function per C function of the
// library's public API (raw_gen.go, generated from abi/api.json by generate.py), with Go types
// that mirror the C ones, plus the few helpers in this file.
//
// Functions that return c10c_status in C return error here: nil on success, else an *Error
// carrying the status and the library's message, captured in the same cgo call (and so on the
// same OS thread) as the failing call. Nothing here manages lifetimes: every handle must be
// released as its Ownership comment says. The idiomatic layer is the parent package, c10c.
package raw

/*
#include <stdlib.h>
#include <stdatomic.h>
#include <c10c/c10c.h>

// Calls a DLPack versioned struct's deleter (NULL-safe).
static void c10cgo_dlpack_versioned_delete(DLManagedTensorVersioned *m) {
  if (m != NULL && m->deleter != NULL) m->deleter(m);
}

// Calls a legacy DLPack struct's deleter (NULL-safe).
static void c10cgo_dlpack_delete(DLManagedTensor *m) {
  if (m != NULL && m->deleter != NULL) m->deleter(m);
}

// A deleter watch: it replaces a DLManagedTensorVersioned's deleter and manager_ctx with its own,
// counts the calls and forwards each to the original deleter with the original context.
typedef struct {
  void *orig_ctx;
  void (*orig_deleter)(struct DLManagedTensorVersioned *);
  _Atomic long long calls;
} c10cgo_watch;

static void c10cgo_watch_deleter(struct DLManagedTensorVersioned *m) {
  c10cgo_watch *w = (c10cgo_watch *)m->manager_ctx;
  atomic_fetch_add(&w->calls, 1);
  m->manager_ctx = w->orig_ctx;
  m->deleter = w->orig_deleter;
  if (w->orig_deleter != NULL) w->orig_deleter(m);
}

static c10cgo_watch *c10cgo_watch_install(DLManagedTensorVersioned *m) {
  c10cgo_watch *w = (c10cgo_watch *)calloc(1, sizeof *w);
  if (w == NULL) return NULL;
  w->orig_ctx = m->manager_ctx;
  w->orig_deleter = m->deleter;
  atomic_init(&w->calls, 0);
  m->manager_ctx = w;
  m->deleter = c10cgo_watch_deleter;
  return w;
}

static long long c10cgo_watch_calls(c10cgo_watch *w) { return atomic_load(&w->calls); }
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// Error is a failed call's status and the message the library stored for it
// (c10c_last_error_message, read on the thread of the failing call).
type Error struct {
	Status  Status // the C10C_STATUS_* code
	Message string // the library's message, word for word
}

// Error formats the error as "C10C_STATUS_NAME: message".
func (e *Error) Error() string {
	return fmt.Sprintf("%s: %s", e.Status.Name(), e.Message)
}

func newError(s Status, msg *C.char) error {
	m := ""
	if msg != nil {
		m = C.GoString(msg)
		C.free(unsafe.Pointer(msg))
	}
	return &Error{Status: s, Message: m}
}

// Name is the status's full C name, "C10C_STATUS_" followed by c10c_status_name(s)
// ("C10C_STATUS_INDEX_OUT_OF_RANGE"; "C10C_STATUS_UNKNOWN" for a number that is not a code).
func (s Status) Name() string { return "C10C_STATUS_" + StatusName(s) }

// String is the same as Name.
func (s Status) String() string { return s.Name() }

// CString returns s as a NUL-terminated byte slice, for the functions that take a const char *;
// pass &b[0]. The library copies what it keeps.
func CString(s string) []byte {
	b := make([]byte, len(s)+1)
	copy(b, s)
	return b
}

// GoString copies a NUL-terminated C string into a Go string ("" for nil).
func GoString(p *byte) string {
	if p == nil {
		return ""
	}
	return C.GoString((*C.char)(unsafe.Pointer(p)))
}

// DLManagedTensorVersionedDelete calls m's deleter, m->deleter(m) (nothing for nil m or a NULL
// deleter). m must not be used afterwards.
func DLManagedTensorVersionedDelete(m *DLManagedTensorVersioned) {
	C.c10cgo_dlpack_versioned_delete((*C.DLManagedTensorVersioned)(unsafe.Pointer(m)))
}

// DLManagedTensorDelete calls a legacy DLManagedTensor's deleter (nothing for nil or NULL).
func DLManagedTensorDelete(m *DLManagedTensor) {
	C.c10cgo_dlpack_delete((*C.DLManagedTensor)(unsafe.Pointer(m)))
}

// DeleterWatch counts the calls of a DLManagedTensorVersioned's deleter (see WatchDeleter).
type DeleterWatch struct{ w *C.c10cgo_watch }

// WatchDeleter replaces m's deleter and manager_ctx with a C trampoline that counts its calls and
// then calls the original deleter with the original context (from any thread). Call it before
// handing m to its consumer. The watch's few bytes are never freed: it must outlive the deleter
// call, which may come at any time.
func WatchDeleter(m *DLManagedTensorVersioned) (*DeleterWatch, error) {
	w := C.c10cgo_watch_install((*C.DLManagedTensorVersioned)(unsafe.Pointer(m)))
	if w == nil {
		return nil, &Error{Status: C10C_STATUS_OUT_OF_MEMORY, Message: "WatchDeleter: out of memory"}
	}
	return &DeleterWatch{w}, nil
}

// Calls is the number of times the watched deleter ran.
func (d *DeleterWatch) Calls() int64 { return int64(C.c10cgo_watch_calls(d.w)) }
