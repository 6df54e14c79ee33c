//! Errors: the library's status codes and its thread-local message.

use crate::sys;
use std::ffi::CStr;
use std::fmt;

/// A failure status of libc10c (`c10c_status_code` without `C10C_STATUS_OK`).
///
/// Values are the library's and never change meaning; a code this binding does not know (a
/// newer library) is kept as [`Status::Unknown`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Status {
    /// `C10C_STATUS_ERROR` (-1): torch's RuntimeError.
    Error,
    /// `C10C_STATUS_INVALID_ARGUMENT` (-2): torch's ValueError.
    InvalidArgument,
    /// `C10C_STATUS_INDEX_OUT_OF_RANGE` (-3): torch's IndexError.
    IndexOutOfRange,
    /// `C10C_STATUS_TYPE_ERROR` (-4): TypeError.
    TypeError,
    /// `C10C_STATUS_NOT_IMPLEMENTED` (-5): NotImplementedError.
    NotImplemented,
    /// `C10C_STATUS_OUT_OF_MEMORY` (-6): MemoryError.
    OutOfMemory,
    /// `C10C_STATUS_OVERFLOW` (-7): an integer overflow.
    Overflow,
    /// `C10C_STATUS_NULL_POINTER` (-8): a NULL argument.
    NullPointer,
    /// `C10C_STATUS_BUFFER_TOO_SMALL` (-9).
    BufferTooSmall,
    /// `C10C_STATUS_UNAVAILABLE` (-10): device or backend unavailable.
    Unavailable,
    /// `C10C_STATUS_ABI_MISMATCH` (-11).
    AbiMismatch,
    /// `C10C_STATUS_INTERNAL` (-12): a bug in libc10c.
    Internal,
    /// `C10C_STATUS_UNSUPPORTED` (-13): not representable in the exchange format (DLPack).
    Unsupported,
    /// A code this binding does not know.
    Unknown(i32),
}

impl Status {
    /// The status for a raw `c10c_status`, `None` for `C10C_STATUS_OK`.
    pub fn from_code(code: sys::c10c_status) -> Option<Status> {
        Some(match code {
            sys::C10C_STATUS_OK => return None,
            sys::C10C_STATUS_ERROR => Status::Error,
            sys::C10C_STATUS_INVALID_ARGUMENT => Status::InvalidArgument,
            sys::C10C_STATUS_INDEX_OUT_OF_RANGE => Status::IndexOutOfRange,
            sys::C10C_STATUS_TYPE_ERROR => Status::TypeError,
            sys::C10C_STATUS_NOT_IMPLEMENTED => Status::NotImplemented,
            sys::C10C_STATUS_OUT_OF_MEMORY => Status::OutOfMemory,
            sys::C10C_STATUS_OVERFLOW => Status::Overflow,
            sys::C10C_STATUS_NULL_POINTER => Status::NullPointer,
            sys::C10C_STATUS_BUFFER_TOO_SMALL => Status::BufferTooSmall,
            sys::C10C_STATUS_UNAVAILABLE => Status::Unavailable,
            sys::C10C_STATUS_ABI_MISMATCH => Status::AbiMismatch,
            sys::C10C_STATUS_INTERNAL => Status::Internal,
            sys::C10C_STATUS_UNSUPPORTED => Status::Unsupported,
            other => Status::Unknown(other),
        })
    }

    /// The raw `c10c_status` value.
    pub fn code(self) -> sys::c10c_status {
        match self {
            Status::Error => sys::C10C_STATUS_ERROR,
            Status::InvalidArgument => sys::C10C_STATUS_INVALID_ARGUMENT,
            Status::IndexOutOfRange => sys::C10C_STATUS_INDEX_OUT_OF_RANGE,
            Status::TypeError => sys::C10C_STATUS_TYPE_ERROR,
            Status::NotImplemented => sys::C10C_STATUS_NOT_IMPLEMENTED,
            Status::OutOfMemory => sys::C10C_STATUS_OUT_OF_MEMORY,
            Status::Overflow => sys::C10C_STATUS_OVERFLOW,
            Status::NullPointer => sys::C10C_STATUS_NULL_POINTER,
            Status::BufferTooSmall => sys::C10C_STATUS_BUFFER_TOO_SMALL,
            Status::Unavailable => sys::C10C_STATUS_UNAVAILABLE,
            Status::AbiMismatch => sys::C10C_STATUS_ABI_MISMATCH,
            Status::Internal => sys::C10C_STATUS_INTERNAL,
            Status::Unsupported => sys::C10C_STATUS_UNSUPPORTED,
            Status::Unknown(c) => c,
        }
    }

    /// The library's name of the code without prefix (`c10c_status_name`): `"INVALID_ARGUMENT"`.
    pub fn name(self) -> &'static str {
        // SAFETY: c10c_status_name returns a static NUL-terminated string for any value.
        unsafe { static_str(sys::c10c_status_name(self.code())) }
    }

    /// The full C constant name, `"C10C_STATUS_" + name()`: `"C10C_STATUS_INVALID_ARGUMENT"`.
    pub fn c_name(self) -> String {
        format!("C10C_STATUS_{}", self.name())
    }

    /// The library's short description (`c10c_status_string`): `"invalid argument"`.
    pub fn description(self) -> &'static str {
        // SAFETY: static string for any value.
        unsafe { static_str(sys::c10c_status_string(self.code())) }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.c_name())
    }
}

/// An error: the library's status and its message (`c10c_last_error_message`), word for word,
/// or a status and message of this binding's own checks (documented where they happen).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    /// The status code.
    pub status: Status,
    /// The message, as the library reports it.
    pub message: String,
}

impl Error {
    /// An error with the given status and message.
    pub fn new(status: Status, message: impl Into<String>) -> Error {
        Error {
            status,
            message: message.into(),
        }
    }

    /// The error of the calling thread's last failing call, with `status` (what that call
    /// returned). Must be called on the same thread right after the failing call.
    pub(crate) fn last(status: Status) -> Error {
        // SAFETY: the message is borrowed until the next failing call on this thread; copied now.
        let message = unsafe { cstr_lossy(sys::c10c_last_error_message()) };
        Error { status, message }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.status, self.message)
    }
}

impl std::error::Error for Error {}

/// `Result<T, c10c::Error>`.
pub type Result<T> = std::result::Result<T, Error>;

/// Turns a returned `c10c_status` into a `Result`, reading the message on failure. Call it
/// immediately on the thread that made the call (the message is thread-local).
#[inline]
pub fn check(code: sys::c10c_status) -> Result<()> {
    match Status::from_code(code) {
        None => Ok(()),
        Some(s) => Err(Error::last(s)),
    }
}

/// # Safety
/// `p` is NULL or a NUL-terminated string that lives for the whole process.
pub(crate) unsafe fn static_str(p: *const std::ffi::c_char) -> &'static str {
    if p.is_null() {
        return "";
    }
    CStr::from_ptr(p).to_str().unwrap_or("")
}

/// # Safety
/// `p` is NULL or a NUL-terminated string valid for this call.
pub(crate) unsafe fn cstr_lossy(p: *const std::ffi::c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    CStr::from_ptr(p).to_string_lossy().into_owned()
}
