//! Compiles the one C function of the LTO plugin interface (`src/lto/message.c`): the plugin API's
//! `message` callback is variadic, which stable Rust can call but not define.
fn main() {
    println!("cargo:rerun-if-changed=src/lto/message.c");
    cc::Build::new().file("src/lto/message.c").warnings(true).compile("rivet_lto_message");
}
