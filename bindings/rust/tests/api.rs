//! Unit tests of the idiomatic layer.

use c10c::{sys, DType, Device, DeviceType, Error, MemoryFormat, Status, Storage, Tensor};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

fn arange(n: usize, sizes: &[i64]) -> Tensor {
    let v: Vec<f32> = (0..n).map(|i| i as f32).collect();
    Tensor::from_slice(&v, sizes).unwrap()
}

/// The functions lib/libc10c.map exports (each listed by name, one per line: `c10c_x;`).
fn exported_functions() -> usize {
    include_str!("../../../lib/libc10c.map")
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("c10c_") && l.ends_with(';'))
        .count()
}

#[test]
fn every_function_is_declared() {
    assert_eq!(sys::FUNCTION_COUNT, exported_functions());
}

#[test]
fn abi_and_version() {
    c10c::abi_check().unwrap();
    assert_eq!(c10c::version().split('.').count(), 3);
}

#[test]
fn errors_carry_status_and_message() {
    let t = Tensor::empty(&[2, 3], DType::Float32, Device::CPU).unwrap();
    let e = t.view(&[5, 5]).unwrap_err();
    assert_eq!(e.status, Status::Error);
    assert_eq!(e.status.c_name(), "C10C_STATUS_ERROR");
    assert_eq!(e.message, "shape '[5, 5]' is invalid for input of size 6");
    assert_eq!(
        e.to_string(),
        "C10C_STATUS_ERROR: shape '[5, 5]' is invalid for input of size 6"
    );
    let e = t.transpose(0, 5).unwrap_err();
    assert_eq!(e.status, Status::IndexOutOfRange);
    assert_eq!(e.status.name(), "INDEX_OUT_OF_RANGE");
    assert_eq!(e.status.description(), "index out of range");
    assert_eq!(
        e.message,
        "Dimension out of range (expected to be in range of [-2, 1], but got 5)"
    );
    let e = Tensor::empty(&[-1], DType::Float32, Device::CPU).unwrap_err();
    assert_eq!(e.message, "Trying to create tensor with negative dimension -1: [-1]");
    let e = Tensor::empty(&[1], DType::Undefined, Device::CPU).unwrap_err();
    assert_eq!(
        (e.status, e.message.as_str()),
        (Status::InvalidArgument, "invalid dtype 46")
    );
    // an error on another thread does not disturb this one's
    let e2 = std::thread::spawn(|| {
        let t = Tensor::empty(&[2], DType::Float32, Device::CPU).unwrap();
        t.select(0, 7).unwrap_err()
    })
    .join()
    .unwrap();
    assert_eq!(e2.status, Status::IndexOutOfRange);
    // every status round-trips through its code
    for code in sys::C10C_STATUS_MIN..0 {
        let s = Status::from_code(code).unwrap();
        assert_eq!(s.code(), code);
        assert!(!matches!(s, Status::Unknown(_)), "code {code}");
        assert_ne!(s.name(), "UNKNOWN");
    }
    assert_eq!(Status::from_code(0), None);
    assert_eq!(Status::from_code(-99), Some(Status::Unknown(-99)));
    let _: &dyn std::error::Error = &Error::new(Status::Error, "x");
}

#[test]
fn dtype_enum_covers_the_library() {
    assert_eq!(DType::ALL.len(), sys::C10C_DTYPE_COUNT as usize);
    for v in 0..sys::C10C_DTYPE_COUNT {
        let d = DType::try_from(v).unwrap();
        assert_eq!(d.raw(), v);
        if d != DType::Undefined {
            assert_eq!(DType::from_name(d.name()).unwrap(), d);
        }
    }
    let e = DType::try_from(sys::C10C_DTYPE_COUNT).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument);
    assert!(DType::try_from(-1).is_err());
    assert_eq!(DType::Float32.name(), "float32");
    assert_eq!(DType::Float32.c10_name(), "Float");
    assert_eq!("float".parse::<DType>().unwrap(), DType::Float32);
    assert_eq!(DType::Int64.itemsize(), 8);
    assert!(DType::BFloat16.is_floating_point());
    assert!(DType::Complex64.is_complex());
    assert!(DType::Bool.is_integral(true) && !DType::Bool.is_integral(false));
    assert_eq!(DType::Int32.promote(DType::Float32).unwrap(), DType::Float32);
    let e = DType::from_name("nope").unwrap_err();
    assert_eq!(e.message, "Unknown dtype name: nope");
}

#[test]
fn device_enum_covers_the_library() {
    assert_eq!(DeviceType::ALL.len(), sys::C10C_DEVICE_TYPE_COUNT as usize);
    for v in 0..sys::C10C_DEVICE_TYPE_COUNT {
        assert_eq!(DeviceType::try_from(v).unwrap().raw(), v);
    }
    assert!(DeviceType::try_from(sys::C10C_DEVICE_TYPE_COUNT).is_err());
    assert_eq!(DeviceType::Cuda.name(), "cuda");
    let d: Device = "cuda:1".parse().unwrap();
    assert_eq!(d, Device::cuda(1));
    assert_eq!(d.to_string(), "cuda:1");
    assert_eq!(Device::CPU.to_string(), "cpu");
    assert_eq!(Device::new(DeviceType::Meta, None).unwrap(), Device::META);
    let e = Device::parse("nope:1").unwrap_err();
    assert_eq!(e.status, Status::Error);
    assert!(e.message.starts_with("Expected one of cpu, cuda"), "{}", e.message);
    assert!(Device::new(DeviceType::Cuda, Some(200)).is_err());
}

#[test]
fn creation_and_metadata() {
    let t = Tensor::empty(&[2, 3, 4], DType::Float64, Device::CPU).unwrap();
    assert_eq!(t.sizes(), &[2, 3, 4]);
    assert_eq!(t.strides(), &[12, 4, 1]);
    assert_eq!((t.dim(), t.numel(), t.storage_offset()), (3, 24, 0));
    assert_eq!(
        (t.dtype(), t.device(), t.itemsize(), t.nbytes()),
        (DType::Float64, Device::CPU, 8, 192)
    );
    assert!(t.is_contiguous() && t.is_non_overlapping_and_dense());
    assert_eq!(t.size(-1).unwrap(), 4);
    assert_eq!(t.stride(0).unwrap(), 12);
    assert_eq!(t.size(3).unwrap_err().status, Status::IndexOutOfRange);
    assert_eq!(t.version().unwrap(), 0);
    assert!(!t.is_read_only() && !t.is_inference());
    let z = Tensor::zeros(&[3], DType::Int32, Device::CPU).unwrap();
    assert_eq!(z.to_vec::<i32>().unwrap(), vec![0, 0, 0]);
    let f = Tensor::full(&[2], 7i64, Device::CPU).unwrap();
    assert_eq!(f.to_vec::<i64>().unwrap(), vec![7, 7]);
    let s = Tensor::empty_strided(&[2, 3], &[1, 2], DType::Float32, Device::CPU).unwrap();
    assert_eq!(s.strides(), &[1, 2]);
    let cl = Tensor::empty_with_format(&[1, 2, 3, 4], DType::Float32, Device::CPU, MemoryFormat::ChannelsLast).unwrap();
    assert!(cl.is_contiguous_as(MemoryFormat::ChannelsLast).unwrap());
    assert!(cl.is_strides_like(MemoryFormat::ChannelsLast));
    let m = Tensor::empty(&[1 << 20, 1 << 20], DType::Float32, Device::META).unwrap();
    assert_eq!(m.device(), Device::META);
    assert!(m.data_ptr().is_null());
    assert_eq!(m.as_slice::<f32>().unwrap_err().status, Status::Unsupported);
    let like = t.empty_like(Some(DType::Int8), None, MemoryFormat::Preserve).unwrap();
    assert_eq!((like.sizes(), like.dtype()), (&[2i64, 3, 4][..], DType::Int8));
    assert_eq!(t.zeros_like().unwrap().to_vec::<f64>().unwrap(), vec![0.0; 24]);
    assert_eq!(t.full_like(2.5f32).unwrap().to_vec::<f32>().unwrap(), vec![2.5; 24]);
    let e = Tensor::from_slice(&[1f32, 2.], &[3]).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument);
    assert!(format!("{t:?}").contains("sizes: [2, 3, 4]"));
}

#[test]
fn views() {
    let t = arange(24, &[4, 6]);
    let n = t.narrow(1, 2, 3).unwrap();
    assert_eq!(
        (n.sizes(), n.strides(), n.storage_offset()),
        (&[4i64, 3][..], &[6i64, 1][..], 2)
    );
    assert_eq!(n.to_vec::<f32>().unwrap()[..3], [2., 3., 4.]);
    let tr = t.transpose(0, 1).unwrap();
    assert_eq!((tr.sizes(), tr.strides()), (&[6i64, 4][..], &[1i64, 6][..]));
    assert!(!tr.is_contiguous());
    assert_eq!(tr.as_slice::<f32>().unwrap_err().status, Status::Error);
    assert_eq!(tr.to_vec::<f32>().unwrap()[..4], [0., 6., 12., 18.]);
    let s = t.select(-1, -2).unwrap();
    assert_eq!(
        (s.sizes(), s.strides(), s.storage_offset()),
        (&[4i64][..], &[6i64][..], 4)
    );
    let p = arange(24, &[2, 3, 4]).permute(&[2, 0, 1]).unwrap();
    assert_eq!((p.sizes(), p.strides()), (&[4i64, 2, 3][..], &[1i64, 12, 4][..]));
    let v = t.view(&[3, -1, 2]).unwrap();
    assert_eq!((v.sizes(), v.strides()), (&[3i64, 4, 2][..], &[8i64, 2, 1][..]));
    assert_eq!(t.unsqueeze(1).unwrap().sizes(), &[4, 1, 6]);
    let e = arange(4, &[4, 1]).expand(&[4, 5]).unwrap();
    assert_eq!(e.strides(), &[1, 0]);
    let sl = t.slice(1, 1, i64::MAX, 2).unwrap();
    assert_eq!(
        (sl.sizes(), sl.strides(), sl.storage_offset()),
        (&[4i64, 3][..], &[6i64, 2][..], 1)
    );
    let a = t.as_strided(&[2, 2], &[1, 3], Some(5)).unwrap();
    assert_eq!((a.strides(), a.storage_offset()), (&[1i64, 3][..], 5));
    assert_eq!(t.as_strided(&[2], &[1], None).unwrap().storage_offset(), 0);
    let d = t.diagonal(1, 0, 1).unwrap();
    assert_eq!(
        (d.sizes(), d.strides(), d.storage_offset()),
        (&[4i64][..], &[7i64][..], 1)
    );
    assert_eq!(d.to_vec::<f32>().unwrap(), vec![1., 8., 15., 22.]);
    let u = t.unfold(1, 2, 2).unwrap();
    assert_eq!((u.sizes(), u.strides()), (&[4i64, 3, 2][..], &[6i64, 2, 1][..]));
    assert_eq!(arange(6, &[1, 6, 1]).squeeze().unwrap().sizes(), &[6]);
    assert_eq!(arange(6, &[1, 6, 1]).squeeze_dims(&[0]).unwrap().sizes(), &[6, 1]);
    assert_eq!(t.flatten(0, -1).unwrap().sizes(), &[24]);
    assert_eq!(t.unflatten(1, &[2, 3]).unwrap().sizes(), &[4, 2, 3]);
    assert_eq!(arange(24, &[2, 3, 4]).movedim(&[0], &[2]).unwrap().sizes(), &[3, 4, 2]);
    assert_eq!(tr.reshape(&[24]).unwrap().to_vec::<f32>().unwrap()[..3], [0., 6., 12.]);
    let vd = t.view_dtype(DType::Int32).unwrap();
    assert_eq!(vd.as_slice::<i32>().unwrap()[1], 1f32.to_bits() as i32);
    // views share the storage; contiguous() of a contiguous tensor is the tensor itself
    assert_eq!(n.storage().as_ptr(), t.storage().as_ptr());
    assert_eq!(t.contiguous().unwrap().as_ptr(), t.as_ptr());
    assert_eq!(tr.contiguous().unwrap().sizes(), &[6, 4]);
    assert_eq!(
        t.deep_clone(MemoryFormat::Contiguous).unwrap().to_vec::<f32>().unwrap(),
        t.to_vec::<f32>().unwrap()
    );
}

#[test]
fn data_access_and_exclusivity() {
    let mut t = Tensor::zeros(&[2, 3], DType::Float32, Device::CPU).unwrap();
    t.as_mut_slice::<f32>().unwrap()[4] = 9.0;
    assert_eq!(t.version().unwrap(), 1);
    assert_eq!(t.as_slice::<f32>().unwrap(), &[0., 0., 0., 0., 9., 0.]);
    assert_eq!(t.as_slice::<i32>().unwrap_err().status, Status::TypeError);
    t.fill(1.5f32).unwrap();
    assert_eq!(t.to_vec::<f32>().unwrap(), vec![1.5; 6]);
    assert_eq!(t.fill(1i32).unwrap_err().status, Status::TypeError);
    let src = arange(3, &[3]);
    t.copy_from(&src).unwrap(); // broadcast
    assert_eq!(t.to_vec::<f32>().unwrap(), vec![0., 1., 2., 0., 1., 2.]);
    t.zero().unwrap();
    assert_eq!(t.to_vec::<f32>().unwrap(), vec![0.; 6]);

    // a clone shares the tensor: neither may write while both live
    let c = t.clone();
    assert_eq!(c.as_ptr(), t.as_ptr());
    let e = t.fill(2f32).unwrap_err();
    assert_eq!(e.status, Status::Error);
    assert!(e.message.contains("shared"), "{}", e.message);
    drop(c);
    t.fill(2f32).unwrap();
    // a view shares the storage
    let v = t.view(&[6]).unwrap();
    assert!(t.zero().is_err());
    drop(v);
    // so does a Storage handle
    let s = t.storage();
    assert_eq!(s.use_count(), 2);
    assert!(t.as_mut_slice::<f32>().is_err());
    assert_eq!(s.as_bytes().unwrap().len(), 24);
    drop(s);
    t.zero().unwrap();
    // copy_ errors are the library's
    let mut e = Tensor::zeros(&[4], DType::Float32, Device::CPU).unwrap();
    let err = e.copy_from(&src).unwrap_err();
    assert_eq!(
        err.message,
        "The size of tensor a (4) must match the size of tensor b (3) at non-singleton dimension 0"
    );
}

#[test]
fn storage_access() {
    let t = arange(6, &[2, 3]);
    let s = t.storage();
    assert_eq!((s.nbytes(), s.device(), s.resizable()), (24, Device::CPU, true));
    assert_eq!(s.allocator_name(), "cpu_caching");
    assert!(!s.is_external());
    assert_eq!(&s.as_bytes().unwrap()[4..8], &1f32.to_ne_bytes());
    let weak = s.downgrade().unwrap();
    assert_eq!(weak.use_count(), 2);
    drop(t);
    let mut s = s;
    assert!(s.resize(8).is_err()); // the weak reference
    drop(weak);
    s.resize(8).unwrap();
    assert_eq!(s.nbytes(), 8);
    s.as_mut_bytes().unwrap()[0] = 1;
    let mut fresh = Storage::new(16, DeviceType::Cpu).unwrap();
    let t2 = Tensor::from_storage(&fresh, &[2, 2], &[2, 1], 0, DType::Float32).unwrap();
    assert!(fresh.as_mut_bytes().is_err()); // the tensor holds it
    let weak = fresh.downgrade().unwrap();
    drop(t2);
    fresh.set_read_only().is_err().then_some(()).unwrap();
    drop(weak);
    fresh.set_read_only().unwrap();
    let mut ro = Tensor::from_storage(&fresh, &[4], &[1], 0, DType::Float32).unwrap();
    drop(fresh);
    assert!(ro.is_read_only());
    let e = ro.fill(1f32).unwrap_err();
    assert!(
        e.message.starts_with("cannot write to a read-only tensor"),
        "{}",
        e.message
    );
    let e = Tensor::from_storage(
        &Storage::new(8, DeviceType::Cpu).unwrap(),
        &[4],
        &[1],
        0,
        DType::Float32,
    )
    .unwrap_err();
    assert!(e.message.starts_with("setStorage:"), "{}", e.message);
}

#[test]
fn dlpack_out_and_in() {
    let t = arange(6, &[2, 3]);
    let dl = t.to_dlpack().unwrap();
    assert_eq!(dl.version(), (1, 3));
    assert_eq!(dl.shape(), &[2, 3]);
    assert_eq!(dl.strides(), Some(&[3i64, 1][..]));
    assert_eq!(
        (dl.dtype().code, dl.dtype().bits, dl.dtype().lanes),
        (sys::kDLFloat as u8, 32, 1)
    );
    assert_eq!(dl.device().device_type, sys::kDLCPU);
    assert_eq!(dl.data_ptr(), t.data_ptr());
    assert!(!dl.is_read_only());
    let deleted = Arc::new(AtomicUsize::new(0));
    let d2 = deleted.clone();
    let dl = dl.on_delete(move || {
        d2.fetch_add(1, Ordering::SeqCst);
    });
    let weak = t.storage().downgrade().unwrap();
    let imported = Tensor::from_dlpack(dl).unwrap();
    assert_eq!(imported.data_ptr(), t.data_ptr());
    assert_eq!(imported.to_vec::<f32>().unwrap(), vec![0., 1., 2., 3., 4., 5.]);
    assert!(imported.storage().is_external());
    let mut t = t;
    assert!(t.fill(0f32).is_err()); // exported: still held by the import
    let mut imp = imported;
    assert!(imp.fill(0f32).is_err()); // external memory
    let view = imp.narrow(0, 1, 1).unwrap();
    drop(t);
    drop(imp);
    assert_eq!(deleted.load(Ordering::SeqCst), 0);
    assert!(!weak.expired());
    drop(view);
    assert_eq!(deleted.load(Ordering::SeqCst), 1);
    assert!(weak.expired());

    // dropping an export calls its deleter once, and frees the tensor's hold
    let mut t = arange(4, &[4]);
    let count = Arc::new(AtomicUsize::new(0));
    let c2 = count.clone();
    let dl = t.to_dlpack().unwrap().on_delete(move || {
        c2.fetch_add(1, Ordering::SeqCst);
    });
    assert!(t.zero().is_err());
    drop(dl);
    assert_eq!(count.load(Ordering::SeqCst), 1);
    t.zero().unwrap();

    // import errors are the library's; the struct's deleter then runs here
    let m = Tensor::empty(&[2], DType::Float32, Device::META).unwrap();
    let e = m.to_dlpack().unwrap_err();
    assert_eq!(
        (e.status, e.message.as_str()),
        (Status::Unsupported, "Cannot pack tensors on meta")
    );
}

#[test]
fn dlpack_import_of_a_foreign_struct() {
    static FREED: AtomicUsize = AtomicUsize::new(0);
    #[repr(C)]
    struct Owner {
        managed: sys::DLManagedTensorVersioned,
        shape: [i64; 1],
        data: Vec<i32>,
    }
    unsafe extern "C" fn deleter(p: *mut sys::DLManagedTensorVersioned) {
        drop(Box::from_raw(p as *mut Owner));
        FREED.fetch_add(1, Ordering::SeqCst);
    }
    let mut owner = Box::new(Owner {
        managed: unsafe { std::mem::zeroed() },
        shape: [3],
        data: vec![7, 8, 9],
    });
    owner.managed.version = sys::DLPackVersion { major: 1, minor: 0 };
    owner.managed.deleter = Some(deleter);
    owner.managed.dl_tensor.data = owner.data.as_mut_ptr().cast();
    owner.managed.dl_tensor.device = sys::DLDevice {
        device_type: sys::kDLCPU,
        device_id: 0,
    };
    owner.managed.dl_tensor.ndim = 1;
    owner.managed.dl_tensor.dtype = sys::DLDataType {
        code: sys::kDLInt as u8,
        bits: 32,
        lanes: 1,
    };
    owner.managed.dl_tensor.shape = owner.shape.as_mut_ptr();
    let raw = Box::into_raw(owner);
    let dl = unsafe { c10c::DLPackTensor::from_raw(raw.cast()) };
    let t = Tensor::from_dlpack(dl).unwrap();
    assert_eq!(t.to_vec::<i32>().unwrap(), vec![7, 8, 9]);
    assert_eq!(t.strides(), &[1]);
    drop(t);
    assert_eq!(FREED.load(Ordering::SeqCst), 1);

    // an unsupported struct is refused with the library's message, then deleted by the binding
    let mut owner = Box::new(Owner {
        managed: unsafe { std::mem::zeroed() },
        shape: [1],
        data: vec![0],
    });
    owner.managed.version = sys::DLPackVersion { major: 2, minor: 0 };
    owner.managed.deleter = Some(deleter);
    let dl = unsafe { c10c::DLPackTensor::from_raw(Box::into_raw(owner).cast()) };
    let e = Tensor::from_dlpack(dl).unwrap_err();
    assert_eq!(e.status, Status::Unsupported);
    assert!(
        e.message.starts_with("DLPack version 2.0 is not supported"),
        "{}",
        e.message
    );
    assert_eq!(FREED.load(Ordering::SeqCst), 2);
}

#[test]
fn send_and_sync_across_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Tensor>();
    assert_send_sync::<Storage>();
    assert_send_sync::<c10c::DLPackTensor>();
    let t = arange(6, &[2, 3]);
    let shared = Arc::new(t.clone());
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let s = shared.clone();
            std::thread::spawn(move || {
                for _ in 0..1000 {
                    let v = s.transpose(0, 1).unwrap();
                    assert_eq!(v.sizes(), &[3, 2]);
                    assert_eq!(s.as_slice::<f32>().unwrap()[5], 5.0);
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let moved = t;
    std::thread::spawn(move || drop(moved)).join().unwrap();
}

#[test]
fn inference_mode_guard() {
    {
        let _g = c10c::InferenceMode::new(true);
        assert!(c10c::InferenceMode::is_enabled());
        let t = Tensor::empty(&[2], DType::Float32, Device::CPU).unwrap();
        assert!(t.is_inference());
        assert_eq!(
            t.version().unwrap_err().message,
            "Inference tensors do not track version counter."
        );
    }
    assert!(!c10c::InferenceMode::is_enabled());
}
