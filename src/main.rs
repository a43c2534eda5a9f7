//! The `agentsig` binary: a thin shell over the library (see `src/cli`).

#![forbid(unsafe_code)]

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
