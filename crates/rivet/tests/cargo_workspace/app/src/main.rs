use mac::Describe;

#[derive(Describe)]
#[allow(dead_code)]
struct Point { x: i32, y: i32, z: i32 }

#[inline(never)]
fn deep_failure(depth: u32) {
    if depth == 0 {
        panic!("deliberate panic for the backtrace");
    }
    deep_failure(depth - 1);
}

fn main() {
    println!("{}", Point::describe());
    // The cdylib, loaded at run time: its exported symbol is found and called.
    let lib = std::env::args().nth(1).expect("path to libcdy.so");
    let sum = unsafe {
        let path = std::ffi::CString::new(lib).unwrap();
        let h = libc_dlopen(path.as_ptr());
        assert!(!h.is_null(), "dlopen failed");
        let f = libc_dlsym(h, c"cdy_checksum".as_ptr());
        assert!(!f.is_null(), "cdy_checksum not exported");
        let f: extern "C" fn(*const u8, usize) -> u32 = std::mem::transmute(f);
        f(b"rivet".as_ptr(), 5)
    };
    println!("checksum {sum}");
    if std::env::var_os("APP_PANIC").is_some() {
        deep_failure(3);
    }
}

extern "C" {
    #[link_name = "dlopen"]
    fn libc_dlopen_raw(path: *const std::ffi::c_char, flags: i32) -> *mut std::ffi::c_void;
    #[link_name = "dlsym"]
    fn libc_dlsym(h: *mut std::ffi::c_void, name: *const std::ffi::c_char) -> *mut std::ffi::c_void;
}
unsafe fn libc_dlopen(path: *const std::ffi::c_char) -> *mut std::ffi::c_void {
    libc_dlopen_raw(path, 2)
}
