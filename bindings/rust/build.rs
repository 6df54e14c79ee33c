//! Links libc10c and builds the C side of the layout test.
//!
//! * `C10C_LIB_DIR`: directory of libc10c.so (default: `../../build/dev/lib` of this crate). An
//!   rpath to it is added to the crate's binaries and tests unless `C10C_RPATH=0`.
//! * `C10C_INCLUDE_DIR`: the headers (default: `../../include`), for the layout test.
//! * `CC`: the C compiler for layout.c (default `cc`). Without one the layout test is skipped,
//!   unless `C10C_REQUIRE_LAYOUT=1` (test.sh), which makes that a build error.

use std::env;
use std::fs;
use std::path::PathBuf;
use std::process::Command;

fn main() {
    for v in [
        "C10C_LIB_DIR",
        "C10C_INCLUDE_DIR",
        "C10C_RPATH",
        "C10C_REQUIRE_LAYOUT",
        "CC",
    ] {
        println!("cargo:rerun-if-env-changed={v}");
    }
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=layout.c");

    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let lib_dir = env::var_os("C10C_LIB_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest.join("../../build/dev/lib"));
    println!("cargo:rustc-link-search=native={}", lib_dir.display());
    println!("cargo:rustc-link-lib=dylib=c10c");
    if env::var("C10C_RPATH").as_deref() != Ok("0") && cfg!(unix) {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{}", lib_dir.display());
    }

    let include = env::var_os("C10C_INCLUDE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest.join("../../include"));
    // the layout is the headers': a header changed (a constant, a struct) makes it again
    println!("cargo:rerun-if-changed={}", include.display());
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    let text = match layout(&manifest, &include, &out) {
        Ok(text) => text,
        Err(why) => {
            if env::var("C10C_REQUIRE_LAYOUT").as_deref() == Ok("1") {
                panic!("layout.c: {why}");
            }
            println!("cargo:warning=layout test skipped: {why}");
            format!("unavailable: {why}\n")
        }
    };
    fs::write(out.join("c_layout.txt"), text).unwrap();
}

fn layout(manifest: &std::path::Path, include: &std::path::Path, out: &std::path::Path) -> Result<String, String> {
    let cc = env::var("CC").unwrap_or_else(|_| "cc".into());
    let exe = out.join("c10c_layout");
    let status = Command::new(&cc)
        .arg("-std=c11")
        .arg("-I")
        .arg(include)
        .arg(manifest.join("layout.c"))
        .arg("-o")
        .arg(&exe)
        .status()
        .map_err(|e| format!("cannot run {cc}: {e}"))?;
    if !status.success() {
        return Err(format!("{cc} failed on layout.c ({status})"));
    }
    let run = Command::new(&exe)
        .output()
        .map_err(|e| format!("cannot run layout: {e}"))?;
    if !run.status.success() {
        return Err(format!("layout program failed ({})", run.status));
    }
    String::from_utf8(run.stdout).map_err(|e| e.to_string())
}
