//! The `brain` command: parse, run, print, exit. The work is in the library.

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
