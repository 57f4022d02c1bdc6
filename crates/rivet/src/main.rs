//! rivet: an x86-64 ELF linker. `main` parses the command line, runs the link and exits.
mod args;
mod input;

fn main() {
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    match args::parse(args) {
        Ok(_config) => {}
        Err(e) => {
            eprintln!("rivet: error: {e}");
            std::process::exit(1);
        }
    }
}
