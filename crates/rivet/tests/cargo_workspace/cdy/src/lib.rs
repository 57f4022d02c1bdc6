#[no_mangle]
pub extern "C" fn cdy_checksum(p: *const u8, n: usize) -> u32 {
    let s = unsafe { std::slice::from_raw_parts(p, n) };
    s.iter().fold(7u32, |h, &b| h.wrapping_mul(31).wrapping_add(b as u32))
}
