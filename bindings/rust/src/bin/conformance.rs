//! The bindings' conformance suite (bindings/conformance/cases.json) run through this crate's
//! public API. Prints one line per case group (`conformance rust: views 12/12`) and exits 1 on
//! any miss.
//!
//!     cargo run --release --bin conformance [-- path/to/cases.json]
//!
//! `C10C_CONFORMANCE_CYCLES` lowers the `cycles` count for a quick local run.

use c10c::{Allocator, DType, Device, DeviceType, Error, Result, Tensor};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

// ---- a small JSON parser (no crates) ----

#[derive(Clone, Debug, PartialEq)]
enum Json {
    Null,
    Bool(bool),
    Num(f64),
    Str(String),
    Arr(Vec<Json>),
    Obj(BTreeMap<String, Json>),
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl<'a> Parser<'a> {
    fn parse(text: &'a str) -> std::result::Result<Json, String> {
        let mut p = Parser {
            s: text.as_bytes(),
            i: 0,
        };
        let v = p.value()?;
        p.ws();
        if p.i != p.s.len() {
            return Err(format!("trailing data at byte {}", p.i));
        }
        Ok(v)
    }

    fn ws(&mut self) {
        while self.i < self.s.len() && matches!(self.s[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> std::result::Result<(), String> {
        self.ws();
        if self.s.get(self.i) == Some(&c) {
            self.i += 1;
            Ok(())
        } else {
            Err(format!("expected '{}' at byte {}", c as char, self.i))
        }
    }

    fn value(&mut self) -> std::result::Result<Json, String> {
        self.ws();
        match self.s.get(self.i) {
            None => Err("unexpected end".into()),
            Some(b'{') => {
                self.i += 1;
                let mut m = BTreeMap::new();
                self.ws();
                if self.s.get(self.i) == Some(&b'}') {
                    self.i += 1;
                    return Ok(Json::Obj(m));
                }
                loop {
                    self.ws();
                    let k = self.string()?;
                    self.eat(b':')?;
                    let v = self.value()?;
                    m.insert(k, v);
                    self.ws();
                    match self.s.get(self.i) {
                        Some(b',') => self.i += 1,
                        Some(b'}') => {
                            self.i += 1;
                            return Ok(Json::Obj(m));
                        }
                        _ => return Err(format!("expected ',' or '}}' at byte {}", self.i)),
                    }
                }
            }
            Some(b'[') => {
                self.i += 1;
                let mut a = Vec::new();
                self.ws();
                if self.s.get(self.i) == Some(&b']') {
                    self.i += 1;
                    return Ok(Json::Arr(a));
                }
                loop {
                    a.push(self.value()?);
                    self.ws();
                    match self.s.get(self.i) {
                        Some(b',') => self.i += 1,
                        Some(b']') => {
                            self.i += 1;
                            return Ok(Json::Arr(a));
                        }
                        _ => return Err(format!("expected ',' or ']' at byte {}", self.i)),
                    }
                }
            }
            Some(b'"') => Ok(Json::Str(self.string()?)),
            Some(b't') => self.word("true", Json::Bool(true)),
            Some(b'f') => self.word("false", Json::Bool(false)),
            Some(b'n') => self.word("null", Json::Null),
            Some(_) => self.number(),
        }
    }

    fn word(&mut self, w: &str, v: Json) -> std::result::Result<Json, String> {
        if self.s[self.i..].starts_with(w.as_bytes()) {
            self.i += w.len();
            Ok(v)
        } else {
            Err(format!("bad literal at byte {}", self.i))
        }
    }

    fn number(&mut self) -> std::result::Result<Json, String> {
        let start = self.i;
        while self.i < self.s.len() && matches!(self.s[self.i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9') {
            self.i += 1;
        }
        let t = std::str::from_utf8(&self.s[start..self.i]).unwrap();
        t.parse::<f64>()
            .map(Json::Num)
            .map_err(|_| format!("bad number {t:?} at byte {start}"))
    }

    fn hex4(&mut self) -> std::result::Result<u32, String> {
        let h = self.s.get(self.i..self.i + 4).ok_or("short \\u escape")?;
        self.i += 4;
        u32::from_str_radix(std::str::from_utf8(h).map_err(|e| e.to_string())?, 16).map_err(|e| e.to_string())
    }

    fn string(&mut self) -> std::result::Result<String, String> {
        if self.s.get(self.i) != Some(&b'"') {
            return Err(format!("expected a string at byte {}", self.i));
        }
        self.i += 1;
        let mut out: Vec<u8> = Vec::new();
        loop {
            let c = *self.s.get(self.i).ok_or("unterminated string")?;
            self.i += 1;
            match c {
                b'"' => return String::from_utf8(out).map_err(|e| e.to_string()),
                b'\\' => {
                    let e = *self.s.get(self.i).ok_or("unterminated escape")?;
                    self.i += 1;
                    let ch = match e {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            let mut cp = self.hex4()?;
                            if (0xD800..0xDC00).contains(&cp) && self.s[self.i..].starts_with(b"\\u") {
                                self.i += 2;
                                let lo = self.hex4()?;
                                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo.wrapping_sub(0xDC00) & 0x3FF);
                            }
                            char::from_u32(cp).unwrap_or('\u{FFFD}')
                        }
                        _ => return Err(format!("bad escape at byte {}", self.i)),
                    };
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                }
                _ => out.push(c),
            }
        }
    }
}

impl Json {
    fn get(&self, k: &str) -> &Json {
        match self {
            Json::Obj(m) => m.get(k).unwrap_or(&Json::Null),
            _ => &Json::Null,
        }
    }
    fn has(&self, k: &str) -> bool {
        matches!(self, Json::Obj(m) if m.contains_key(k))
    }
    fn i64(&self) -> i64 {
        match self {
            Json::Num(n) => *n as i64,
            other => panic!("expected a number, got {other:?}"),
        }
    }
    fn f64(&self) -> f64 {
        match self {
            Json::Num(n) => *n,
            other => panic!("expected a number, got {other:?}"),
        }
    }
    fn str(&self) -> &str {
        match self {
            Json::Str(s) => s,
            other => panic!("expected a string, got {other:?}"),
        }
    }
    fn arr(&self) -> &[Json] {
        match self {
            Json::Arr(a) => a,
            other => panic!("expected an array, got {other:?}"),
        }
    }
    fn i64s(&self) -> Vec<i64> {
        self.arr().iter().map(Json::i64).collect()
    }
}

// ---- the suite ----

fn base(spec: &Json) -> Result<Tensor> {
    let dtype = DType::from_name(spec.get("dtype").str())?;
    Tensor::empty(&spec.get("shape").i64s(), dtype, Device::CPU)
}

/// Runs a view op named in cases.json through the public API.
fn apply(t: &Tensor, op: &str, a: &Json) -> Result<Tensor> {
    let i = |k: &str| a.get(k).i64();
    let v = |k: &str| a.get(k).i64s();
    match op {
        "narrow" => t.narrow(i("dim"), i("start"), i("length")),
        "transpose" => t.transpose(i("dim0"), i("dim1")),
        "select" => t.select(i("dim"), i("index")),
        "permute" => t.permute(&v("dims")),
        "view" => t.view(&v("shape")),
        "reshape" => t.reshape(&v("shape")),
        "unsqueeze" => t.unsqueeze(i("dim")),
        "squeeze" if a.has("dims") => t.squeeze_dims(&v("dims")),
        "squeeze" => t.squeeze(),
        "squeeze_dims" => t.squeeze_dims(&v("dims")),
        "expand" => t.expand(&v("sizes")),
        "slice" => t.slice(
            i("dim"),
            i("start"),
            i("end"),
            if a.has("step") { i("step") } else { 1 },
        ),
        "as_strided" => t.as_strided(
            &v("sizes"),
            &v("strides"),
            if a.has("storage_offset") {
                Some(i("storage_offset"))
            } else {
                None
            },
        ),
        "diagonal" => t.diagonal(i("offset"), i("dim1"), i("dim2")),
        "unfold" => t.unfold(i("dim"), i("size"), i("step")),
        "flatten" => t.flatten(i("start_dim"), i("end_dim")),
        "unflatten" => t.unflatten(i("dim"), &v("sizes")),
        "movedim" => t.movedim(&v("source"), &v("destination")),
        "view_dtype" => t.view_dtype(DType::from_name(a.get("dtype").str())?),
        other => Err(Error::new(
            c10c::Status::NotImplemented,
            format!("conformance: unknown op {other}"),
        )),
    }
}

struct Group {
    name: &'static str,
    passed: usize,
    total: usize,
}

impl Group {
    fn new(name: &'static str) -> Group {
        Group {
            name,
            passed: 0,
            total: 0,
        }
    }
    fn record(&mut self, ok: bool, what: impl FnOnce() -> String) {
        self.total += 1;
        if ok {
            self.passed += 1;
        } else {
            eprintln!("conformance rust: {} MISS: {}", self.name, what());
        }
    }
}

fn views(cases: &Json) -> Group {
    let mut g = Group::new("views");
    for c in cases.get("views").arr() {
        let op = c.get("op").str();
        let got = base(c.get("base")).and_then(|t| apply(&t, op, c.get("args")));
        match got {
            Ok(v) => {
                let ok = v.sizes() == c.get("sizes").i64s().as_slice()
                    && v.strides() == c.get("strides").i64s().as_slice()
                    && v.storage_offset() == c.get("storage_offset").i64();
                g.record(ok, || {
                    format!(
                        "{op} {:?}: got sizes {:?} strides {:?} offset {}, want {:?} {:?} {}",
                        c.get("args"),
                        v.sizes(),
                        v.strides(),
                        v.storage_offset(),
                        c.get("sizes").i64s(),
                        c.get("strides").i64s(),
                        c.get("storage_offset").i64()
                    )
                });
            }
            Err(e) => g.record(false, || format!("{op}: {e}")),
        }
    }
    g
}

fn errors(cases: &Json) -> Group {
    let mut g = Group::new("errors");
    for c in cases.get("errors").arr() {
        let op = c.get("op").str();
        let got = base(c.get("base")).and_then(|t| apply(&t, op, c.get("args")));
        let (want_status, want_msg) = (c.get("status").str(), c.get("message").str());
        match got {
            Ok(v) => g.record(false, || format!("{op}: succeeded ({v:?}), want {want_status}")),
            Err(e) => g.record(e.status.c_name() == want_status && e.message == want_msg, || {
                format!(
                    "{op}: got {} {:?}, want {want_status} {want_msg:?}",
                    e.status.c_name(),
                    e.message
                )
            }),
        }
    }
    g
}

fn filled(spec: &Json) -> Result<Tensor> {
    let shape = spec.get("shape").i64s();
    let vals: Vec<f64> = spec.get("values").arr().iter().map(Json::f64).collect();
    fn make<T: c10c::Element>(vals: &[f64], shape: &[i64]) -> Result<Tensor> {
        let v: Vec<T> = vals.iter().map(|&x| T::from_f64(x)).collect();
        Tensor::from_slice(&v, shape)
    }
    match DType::from_name(spec.get("dtype").str())? {
        DType::Float32 => make::<f32>(&vals, &shape),
        DType::Float64 => make::<f64>(&vals, &shape),
        DType::Int64 => make::<i64>(&vals, &shape),
        DType::Int32 => make::<i32>(&vals, &shape),
        DType::Int16 => make::<i16>(&vals, &shape),
        DType::Int8 => make::<i8>(&vals, &shape),
        DType::UInt8 => make::<u8>(&vals, &shape),
        d => Err(Error::new(
            c10c::Status::NotImplemented,
            format!("conformance: values of {d}"),
        )),
    }
}

fn values_f64(t: &Tensor) -> Result<Vec<f64>> {
    fn get<T: c10c::Element>(t: &Tensor) -> Result<Vec<f64>> {
        Ok(t.to_vec::<T>()?.into_iter().map(T::to_f64).collect())
    }
    match t.dtype() {
        DType::Float32 => get::<f32>(t),
        DType::Float64 => get::<f64>(t),
        DType::Int64 => get::<i64>(t),
        DType::Int32 => get::<i32>(t),
        DType::Int16 => get::<i16>(t),
        DType::Int8 => get::<i8>(t),
        DType::UInt8 => get::<u8>(t),
        d => Err(Error::new(
            c10c::Status::NotImplemented,
            format!("conformance: values of {d}"),
        )),
    }
}

/// Runs one case whose checks are recorded in a scratch group: the case passes when all do.
fn one_case(g: &mut Group, run: impl FnOnce(&mut Group) -> Result<()>) {
    let mut checks = Group::new(g.name);
    if let Err(e) = run(&mut checks) {
        checks.record(false, || format!("{e}"));
    }
    g.record(checks.total > 0 && checks.passed == checks.total, || "see above".into());
}

fn dlpack(cases: &Json) -> Group {
    let mut g = Group::new("dlpack");
    let spec = cases.get("dlpack");
    let want: Vec<f64> = spec.get("values").arr().iter().map(Json::f64).collect();
    let run = |g: &mut Group| -> Result<()> {
        let t = filled(spec)?;
        let deleted = Arc::new(AtomicUsize::new(0));
        let d2 = deleted.clone();
        let export = t.to_dlpack()?.on_delete(move || {
            d2.fetch_add(1, Ordering::SeqCst);
        });
        let export_data = export.data_ptr();
        let weak = t.storage().downgrade()?;
        let imported = Tensor::from_dlpack(export)?;
        g.record(
            imported.data_ptr() == export_data && export_data == t.data_ptr(),
            || format!("import data {:?}, export data {:?}", imported.data_ptr(), export_data),
        );
        g.record(imported.sizes() == spec.get("shape").i64s().as_slice(), || {
            format!("import sizes {:?}", imported.sizes())
        });
        let got = values_f64(&imported)?;
        g.record(got == want, || format!("import values {got:?}, want {want:?}"));
        drop(t);
        let early = deleted.load(Ordering::SeqCst);
        g.record(early == 0 && !weak.expired(), || {
            format!("deleter ran {early} times while the import lives")
        });
        drop(imported);
        let n = deleted.load(Ordering::SeqCst);
        g.record(n == 1 && weak.expired(), || {
            format!("deleter ran {n} times after the last release (want 1)")
        });
        Ok(())
    };
    one_case(&mut g, run);
    g
}

fn cpu_live() -> Result<i64> {
    Ok(Allocator::get(DeviceType::Cpu)?.stats()?.allocation[0].current)
}

fn release_on_other_thread(cases: &Json) -> Group {
    let mut g = Group::new("release_on_other_thread");
    let spec = cases.get("release_on_other_thread");
    let run = |g: &mut Group| -> Result<()> {
        let count = spec.get("count").i64() as usize;
        let dtype = DType::from_name(spec.get("dtype").str())?;
        let shape = spec.get("shape").i64s();
        let before = cpu_live()?;
        let tensors = (0..count)
            .map(|_| Tensor::empty(&shape, dtype, Device::CPU))
            .collect::<Result<Vec<_>>>()?;
        let made = cpu_live()?;
        let joined = std::thread::spawn(move || drop(tensors)).join();
        g.record(joined.is_ok(), || "the releasing thread panicked".into());
        let after = cpu_live()?;
        g.record(after == before, || {
            format!("live CPU allocations {before} before, {made} with the tensors, {after} after")
        });
        Ok(())
    };
    one_case(&mut g, run);
    g
}

fn rss_bytes() -> i64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<i64>().ok())
        .map(|kb| kb * 1024)
        .unwrap_or(-1)
}

fn cycles(cases: &Json) -> Group {
    let mut g = Group::new("cycles");
    let spec = cases.get("cycles");
    let mut count = spec.get("count").i64();
    if let Ok(v) = std::env::var("C10C_CONFORMANCE_CYCLES") {
        match v.trim().parse::<i64>() {
            Ok(n) if n >= 0 => count = count.min(n),
            _ => eprintln!("conformance rust: ignoring C10C_CONFORMANCE_CYCLES={v:?}"),
        }
    }
    let warmup = spec.get("warmup").i64().min(count);
    let limit = spec.get("rss_growth_limit_bytes").i64();
    let dtype = match DType::from_name(spec.get("base").get("dtype").str()) {
        Ok(d) => d,
        Err(e) => {
            g.record(false, || e.to_string());
            return g;
        }
    };
    let shape = spec.get("base").get("shape").i64s();
    let (op, args) = (spec.get("view").get("op").str(), spec.get("view").get("args"));
    let one = || -> Result<()> {
        let t = Tensor::empty(&shape, dtype, Device::CPU)?;
        let v = apply(&t, op, args)?;
        drop(v);
        drop(t);
        Ok(())
    };
    let start = std::time::Instant::now();
    for _ in 0..warmup {
        if let Err(e) = one() {
            g.record(false, || e.to_string());
            return g;
        }
    }
    let rss0 = rss_bytes();
    for _ in warmup..count {
        if let Err(e) = one() {
            g.record(false, || e.to_string());
            return g;
        }
    }
    let rss1 = rss_bytes();
    let growth = rss1 - rss0;
    g.record(rss0 > 0 && growth < limit, || {
        format!(
            "VmRSS grew {growth} bytes over {} cycles (limit {limit})",
            count - warmup
        )
    });
    eprintln!(
        "conformance rust: cycles: {count} cycles in {:.2} s, VmRSS {rss0} -> {rss1} bytes",
        start.elapsed().as_secs_f64()
    );
    g
}

fn main() {
    let path = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../conformance/cases.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        eprintln!("conformance rust: cannot read {}: {e}", path.display());
        std::process::exit(2);
    });
    let cases = Parser::parse(&text).unwrap_or_else(|e| {
        eprintln!("conformance rust: {}: {e}", path.display());
        std::process::exit(2);
    });
    let groups = [
        cycles(&cases),
        views(&cases),
        errors(&cases),
        dlpack(&cases),
        release_on_other_thread(&cases),
    ];
    let mut failed = false;
    for g in &groups {
        println!("conformance rust: {} {}/{}", g.name, g.passed, g.total);
        failed |= g.passed != g.total || g.total == 0;
    }
    if failed {
        std::process::exit(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_parser() {
        let j = Parser::parse(r#"{"a": [1, -2.5e1, true, null], "b": "x\"\u00e9\n", "c": {}}"#).unwrap();
        assert_eq!(j.get("a").arr()[1].f64(), -25.0);
        assert_eq!(j.get("b").str(), "x\"é\n");
        assert!(j.has("c") && !j.has("d"));
        assert!(Parser::parse("[1,]").is_err());
        assert!(Parser::parse("{} x").is_err());
    }
}
