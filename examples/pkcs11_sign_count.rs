//! A counted loop of signatures through a PKCS#11 token, to be run under
//! an instruction counter (`valgrind --tool=callgrind`): what the check
//! of each token signature before release costs against the token's own
//! `C_Sign` (docs/benchmarks.md, "Signing through a PKCS#11 token").
//!
//! `cargo run --release --example pkcs11_sign_count -- 'pkcs11:...' 1000`

use agentsig::keys::{pkcs11, LoadOptions};

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(uri), n) = (args.next(), args.next()) else {
        eprintln!("usage: pkcs11_sign_count 'pkcs11:...' [COUNT]");
        std::process::exit(2);
    };
    let n: u32 = n.and_then(|n| n.parse().ok()).unwrap_or(1000);
    let key = match pkcs11::load(&uri, &LoadOptions::default()) {
        Ok(k) => k,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let msg = b"\"@status\": 200\n\"@signature-params\": (\"@status\");created=1700000000";
    let mut total = 0usize;
    for _ in 0..n {
        match key.sign(msg) {
            Ok(sig) => total += sig.len(),
            Err(e) => {
                eprintln!("{e}");
                std::process::exit(1);
            }
        }
    }
    println!("{n} signatures, {total} bytes");
}
