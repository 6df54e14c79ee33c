//! Storages (`c10c_storage`: refcounted untyped bytes), weak references to them, and the
//! allocators' statistics.

use crate::device::{Device, DeviceType};
use crate::error::{check, static_str, Error, Result, Status};
use crate::sys;
use std::ptr::NonNull;

/// A strong reference to a storage: refcounted, untyped bytes on a device.
///
/// `Clone` adds a reference (`c10c_storage_retain`), `Drop` drops one (`c10c_storage_release`);
/// the last one frees the bytes.
///
/// # Thread-safety
/// `Send`: the library's refcounts are atomic, so a reference may be dropped on any thread.
/// `Sync`: every `&self` method only reads (size, device, counts, the bytes); whatever changes
/// the storage (its size, its read-only flag, its bytes) takes `&mut self` and first checks
/// that this is the only reference of any kind to the storage (no other `Storage`, no tensor
/// over it, no weak reference), so no other thread can be reading it meanwhile.
pub struct Storage {
    ptr: NonNull<sys::c10c_storage>,
}

// SAFETY: see the type's documentation: atomic refcounts; &self methods read only, and mutation
// needs &mut self plus a unique reference.
unsafe impl Send for Storage {}
// SAFETY: as above.
unsafe impl Sync for Storage {}

impl Storage {
    /// A storage of `nbytes` uninitialized bytes from the installed allocator of `device_type`
    /// (the CPU caching allocator for CPU), resizable.
    pub fn new(nbytes: i64, device_type: DeviceType) -> Result<Storage> {
        let mut out = std::ptr::null_mut();
        // SAFETY: out is valid; NULL allocator means the installed one.
        check(unsafe { sys::c10c_storage_new(&mut out, nbytes, std::ptr::null_mut(), device_type.raw(), true) })?;
        // SAFETY: a new reference on success.
        Ok(unsafe { Storage::from_raw(out) })
    }

    /// Adopts a reference.
    ///
    /// # Safety
    /// `ptr` is a non-NULL `c10c_storage` reference the caller owns (it is released on drop).
    pub unsafe fn from_raw(ptr: *mut sys::c10c_storage) -> Storage {
        Storage {
            ptr: NonNull::new(ptr).expect("c10c_storage reference is NULL"),
        }
    }

    /// The storage pointer (borrowed: valid while `self` lives).
    pub fn as_ptr(&self) -> *mut sys::c10c_storage {
        self.ptr.as_ptr()
    }

    /// Gives up the reference without releasing it.
    pub fn into_raw(self) -> *mut sys::c10c_storage {
        let p = self.ptr.as_ptr();
        std::mem::forget(self);
        p
    }

    /// Size in bytes.
    pub fn nbytes(&self) -> i64 {
        // SAFETY: valid handle.
        unsafe { sys::c10c_storage_nbytes(self.ptr.as_ptr()) }
    }

    /// The device of the bytes.
    pub fn device(&self) -> Device {
        // SAFETY: valid handle.
        let d = unsafe { sys::c10c_storage_device(self.ptr.as_ptr()) };
        Device::try_from(d).unwrap_or(Device::CPU)
    }

    /// Whether it may be resized (made by an allocator, not over external memory).
    pub fn resizable(&self) -> bool {
        // SAFETY: valid handle.
        unsafe { sys::c10c_storage_resizable(self.ptr.as_ptr()) }
    }

    /// Whether the memory is external (a DLPack import, memory a host handed in): no allocator.
    pub fn is_external(&self) -> bool {
        // SAFETY: valid handle.
        unsafe { sys::c10c_storage_allocator(self.ptr.as_ptr()).is_null() }
    }

    /// The name of the allocator that made the bytes ("cpu_caching"), `""` for external memory.
    pub fn allocator_name(&self) -> &str {
        // SAFETY: the allocator lives as long as the storage (borrowed for &self).
        unsafe {
            let a = sys::c10c_storage_allocator(self.ptr.as_ptr());
            if a.is_null() {
                ""
            } else {
                static_str(sys::c10c_allocator_name(a))
            }
        }
    }

    /// Number of strong references (every `Storage`, and one per tensor over it).
    pub fn use_count(&self) -> u32 {
        // SAFETY: valid handle.
        unsafe { sys::c10c_storage_use_count(self.ptr.as_ptr()) }
    }

    /// c10's weak_use_count: weak references, plus one while strong ones exist.
    pub fn weak_use_count(&self) -> u32 {
        // SAFETY: valid handle.
        unsafe { sys::c10c_storage_weak_use_count(self.ptr.as_ptr()) }
    }

    /// Whether the storage is read-only (in-place writes to tensors over it are refused).
    pub fn is_read_only(&self) -> bool {
        // SAFETY: valid handle.
        unsafe { sys::c10c_storage_is_read_only(self.ptr.as_ptr()) }
    }

    /// Whether this is the only reference of any kind to the storage (no other `Storage`, no
    /// tensor over it, no weak reference).
    pub fn is_unique(&mut self) -> bool {
        self.use_count() == 1 && self.weak_use_count() == 1
    }

    /// The storage's raw data pointer (NULL for 0 bytes and meta storages). Borrowed: valid until
    /// the storage is resized or freed; reading or writing through it is the caller's business.
    pub fn data_ptr(&self) -> *mut std::ffi::c_void {
        // SAFETY: valid handle.
        unsafe { sys::c10c_storage_data(self.ptr.as_ptr()) }
    }

    /// The bytes of a CPU storage (empty for 0 bytes). Sound because writers need a unique
    /// reference (see the type's documentation); refused (`Status::Unsupported`) off the CPU.
    pub fn as_bytes(&self) -> Result<&[u8]> {
        self.host_bytes().map(|(p, n)| {
            if n == 0 {
                &[][..]
            } else {
                // SAFETY: p holds n bytes of host memory that nobody writes while &self lives
                // (writers need the only reference; this one is held).
                unsafe { std::slice::from_raw_parts(p as *const u8, n) }
            }
        })
    }

    /// The bytes of a CPU storage, writable: needs the only reference (else `Status::Error`),
    /// memory from an allocator (external memory may be aliased elsewhere) and a writable storage.
    pub fn as_mut_bytes(&mut self) -> Result<&mut [u8]> {
        self.check_exclusive("write to")?;
        if self.is_read_only() {
            return Err(Error::new(Status::Error, "cannot write to a read-only storage"));
        }
        if self.is_external() {
            return Err(Error::new(
                Status::Error,
                "cannot write to external memory (a DLPack import or memory handed in) through the safe API: it may be aliased elsewhere; use data_ptr()",
            ));
        }
        let (p, n) = self.host_bytes()?;
        if n == 0 {
            return Ok(&mut [][..]);
        }
        // SAFETY: exclusive reference (checked above) to n bytes of host memory.
        Ok(unsafe { std::slice::from_raw_parts_mut(p as *mut u8, n) })
    }

    /// Resizes to `nbytes` (`c10c_storage_resize`: new bytes uninitialized, the common prefix
    /// kept). Needs the only reference (`Status::Error` otherwise), so no tensor sees it change.
    pub fn resize(&mut self, nbytes: i64) -> Result<()> {
        self.check_exclusive("resize")?;
        // SAFETY: valid handle, exclusive.
        check(unsafe { sys::c10c_storage_resize(self.ptr.as_ptr(), nbytes) })
    }

    /// Marks the storage read-only, for good (`c10c_storage_set_read_only`). Needs the only
    /// reference: the flag is not atomic in the library.
    pub fn set_read_only(&mut self) -> Result<()> {
        self.check_exclusive("mark read-only")?;
        // SAFETY: valid handle, exclusive.
        check(unsafe { sys::c10c_storage_set_read_only(self.ptr.as_ptr()) })
    }

    /// A weak reference (does not keep the bytes).
    pub fn downgrade(&self) -> Result<WeakStorage> {
        let mut out = std::ptr::null_mut();
        // SAFETY: valid handle and out.
        check(unsafe { sys::c10c_storage_weak_ref(&mut out, self.ptr.as_ptr()) })?;
        Ok(WeakStorage {
            ptr: NonNull::new(out).expect("weak_ref gave NULL"),
        })
    }

    fn check_exclusive(&mut self, what: &str) -> Result<()> {
        if self.is_unique() {
            Ok(())
        } else {
            Err(Error::new(
                Status::Error,
                format!(
                    "cannot {what} a storage that is shared ({} strong references, weak use count {}): drop the other references first",
                    self.use_count(),
                    self.weak_use_count()
                ),
            ))
        }
    }

    fn host_bytes(&self) -> Result<(*mut std::ffi::c_void, usize)> {
        let d = self.device();
        if d.kind != DeviceType::Cpu {
            return Err(Error::new(
                Status::Unsupported,
                format!("the bytes of a {d} storage are not host memory"),
            ));
        }
        let n = self.nbytes().max(0) as usize;
        let p = self.data_ptr();
        if p.is_null() && n > 0 {
            return Err(Error::new(Status::Error, "the storage has no data"));
        }
        Ok((p, n))
    }
}

impl Clone for Storage {
    /// Another reference to the same storage (`c10c_storage_retain`).
    fn clone(&self) -> Storage {
        // SAFETY: valid handle; retain returns it owned once more.
        Storage {
            ptr: NonNull::new(unsafe { sys::c10c_storage_retain(self.ptr.as_ptr()) }).unwrap(),
        }
    }
}

impl Drop for Storage {
    fn drop(&mut self) {
        // SAFETY: we own one reference.
        unsafe { sys::c10c_storage_release(self.ptr.as_ptr()) }
    }
}

impl std::fmt::Debug for Storage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Storage")
            .field("nbytes", &self.nbytes())
            .field("device", &self.device())
            .field("use_count", &self.use_count())
            .finish()
    }
}

/// A weak reference to a storage (c10's weak_intrusive_ptr): keeps the shell, not the bytes.
/// `Send + Sync`: its refcounts are atomic and its methods only read them or lock (atomic).
pub struct WeakStorage {
    ptr: NonNull<sys::c10c_weak_storage>,
}

// SAFETY: atomic weak/strong counts; no method mutates anything else.
unsafe impl Send for WeakStorage {}
// SAFETY: as above.
unsafe impl Sync for WeakStorage {}

impl WeakStorage {
    /// A strong reference, or `None` once the storage's last strong reference went.
    pub fn upgrade(&self) -> Result<Option<Storage>> {
        let mut out = std::ptr::null_mut();
        // SAFETY: valid handle and out.
        check(unsafe { sys::c10c_weak_storage_lock(&mut out, self.ptr.as_ptr()) })?;
        // SAFETY: out is NULL or a new reference.
        Ok(if out.is_null() {
            None
        } else {
            Some(unsafe { Storage::from_raw(out) })
        })
    }

    /// Whether the storage's strong count reached 0 (its bytes are freed).
    pub fn expired(&self) -> bool {
        // SAFETY: valid handle.
        unsafe { sys::c10c_weak_storage_expired(self.ptr.as_ptr()) }
    }

    /// The storage's strong count (0 once expired).
    pub fn use_count(&self) -> u32 {
        // SAFETY: valid handle.
        unsafe { sys::c10c_weak_storage_use_count(self.ptr.as_ptr()) }
    }
}

impl Clone for WeakStorage {
    fn clone(&self) -> WeakStorage {
        // SAFETY: valid handle.
        WeakStorage {
            ptr: NonNull::new(unsafe { sys::c10c_weak_storage_retain(self.ptr.as_ptr()) }).unwrap(),
        }
    }
}

impl Drop for WeakStorage {
    fn drop(&mut self) {
        // SAFETY: we own one weak reference.
        unsafe { sys::c10c_weak_storage_release(self.ptr.as_ptr()) }
    }
}

/// Memory statistics of an allocator (`c10c_memory_stats`, the shape of
/// torch.cuda.memory_stats(): `allocation[0].current` is "allocation.all.current").
pub type MemoryStats = sys::c10c_memory_stats;

/// The installed allocator of a device type (a reference; `Drop` releases it).
/// `Send + Sync`: the library's allocators are safe to use from any thread.
pub struct Allocator {
    ptr: NonNull<sys::c10c_allocator>,
}

// SAFETY: allocator.h: allocators and their statistics are thread-safe; refcounts atomic.
unsafe impl Send for Allocator {}
// SAFETY: as above.
unsafe impl Sync for Allocator {}

impl Allocator {
    /// The installed allocator of `device_type` (`c10c_allocator_get`).
    pub fn get(device_type: DeviceType) -> Result<Allocator> {
        let mut out = std::ptr::null_mut();
        // SAFETY: out is valid.
        check(unsafe { sys::c10c_allocator_get(&mut out, device_type.raw()) })?;
        Ok(Allocator {
            ptr: NonNull::new(out).expect("allocator_get gave NULL"),
        })
    }

    /// Its name ("cpu_caching").
    pub fn name(&self) -> &str {
        // SAFETY: borrowed, lives as long as the allocator.
        unsafe { static_str(sys::c10c_allocator_name(self.ptr.as_ptr())) }
    }

    /// Its statistics (`c10c_allocator_get_stats`).
    pub fn stats(&self) -> Result<MemoryStats> {
        // SAFETY: an all-zero c10c_memory_stats is valid (plain integers).
        let mut s: MemoryStats = unsafe { std::mem::zeroed() };
        s.struct_size = std::mem::size_of::<MemoryStats>() as u32;
        // SAFETY: s is valid and sized.
        check(unsafe { sys::c10c_allocator_get_stats(&mut s, self.ptr.as_ptr()) })?;
        Ok(s)
    }

    /// Returns cached memory to the system.
    pub fn empty_cache(&self) -> Result<()> {
        // SAFETY: valid handle.
        check(unsafe { sys::c10c_allocator_empty_cache(self.ptr.as_ptr()) })
    }
}

impl Drop for Allocator {
    fn drop(&mut self) {
        // SAFETY: we own the reference from c10c_allocator_get.
        unsafe { sys::c10c_allocator_release(self.ptr.as_ptr()) }
    }
}
