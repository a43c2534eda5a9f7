//! A real SoftHSM2 token for the PKCS#11 tests, made by the test itself:
//! its own SOFTHSM2_CONF and token directory under the system temporary
//! directory, a token initialized with `softhsm2-util --init-token`, and
//! key pairs generated in it by OpenSC's `pkcs11-tool`, an implementation
//! independent of agentsig.
//!
//! Skips with a printed `SKIPPED pkcs11 ...` when softhsm2 or pkcs11-tool is
//! absent, unless `AGENTSIG_REQUIRE_INTEROP=1` (scripts/test.sh), which
//! makes a missing tool a failure.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

pub const LABEL: &str = "agentsig-test";
pub const PIN: &str = "1234";
pub const SO_PIN: &str = "5678";

/// The SoftHSM2 module paths of Debian and of other distributions.
const MODULES: [&str; 4] = [
    "/usr/lib/softhsm/libsofthsm2.so",
    "/usr/lib/x86_64-linux-gnu/softhsm/libsofthsm2.so",
    "/usr/lib64/pkcs11/libsofthsm2.so",
    "/usr/local/lib/softhsm/libsofthsm2.so",
];

/// The key pairs the fixture makes with pkcs11-tool: (label, CKA_ID hex,
/// pkcs11-tool key type).
pub const KEYS: [(&str, &str, &str); 4] = [
    ("p256", "01", "EC:prime256v1"),
    ("p384", "02", "EC:secp384r1"),
    ("ed25519", "03", "EC:edwards25519"),
    ("rsa", "04", "rsa:2048"),
];

/// One test at a time uses the token: SoftHSM2's file store is shared by
/// this process and the agentsig and pkcs11-tool processes the tests start,
/// and SoftHSM2 2.6 does not keep a consistent view of one token written
/// (a login counts as a write) by several processes at once: a reader then
/// sees the token vanish or a general error.
static IN_USE: std::sync::Mutex<()> = std::sync::Mutex::new(());

pub struct Token {
    pub dir: PathBuf,
    pub conf: PathBuf,
    pub module: String,
    pub pin_file: PathBuf,
}

fn on_path(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

fn skip(why: &str) -> Option<&'static Token> {
    if std::env::var("AGENTSIG_REQUIRE_INTEROP").as_deref() == Ok("1") {
        panic!("{why} and AGENTSIG_REQUIRE_INTEROP=1 (apt-get install -y softhsm2 opensc)");
    }
    // The real stderr, so the skip shows in `cargo test` output.
    use std::io::Write as _;
    let _ = writeln!(
        std::io::stderr(),
        "SKIPPED pkcs11: {why} (apt-get install -y softhsm2 opensc)"
    );
    None
}

/// The standard output of a command that succeeded; else a panic with
/// both outputs.
/// Write a secret file only its owner can read (a PIN file must be one).
pub fn write_private(path: &Path, data: &[u8]) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, data).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).unwrap();
}

pub fn stdout_of(what: &str, out: &std::process::Output) -> String {
    assert!(
        out.status.success(),
        "{what}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().expect("run tool");
    stdout_of(&format!("{cmd:?}"), &out)
}

/// The token, made once per test process, and the right to use it until
/// the guard drops; `None` when the tools are absent.
pub fn token() -> Option<(&'static Token, std::sync::MutexGuard<'static, ()>)> {
    let guard = IN_USE.lock().unwrap_or_else(|p| p.into_inner());
    made().map(|t| (t, guard))
}

fn made() -> Option<&'static Token> {
    static T: OnceLock<Option<Token>> = OnceLock::new();
    let t = T.get_or_init(|| {
        let module = MODULES.iter().find(|m| Path::new(m).is_file())?;
        if !on_path("softhsm2-util") || !on_path("pkcs11-tool") {
            return None;
        }
        // Under cargo's directory for integration-test files, not the
        // system's: the token is made once per process and lives in a
        // static, which is never dropped, so it could not clean up after
        // itself there.
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
            "agentsig-pkcs11-{}-{}",
            std::process::id(),
            std::env::args()
                .next()
                .and_then(|a| Path::new(&a)
                    .file_name()
                    .map(|f| f.to_string_lossy().into_owned()))
                .unwrap_or_default()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("tokens")).unwrap();
        let conf = dir.join("softhsm2.conf");
        std::fs::write(
            &conf,
            format!(
                "directories.tokendir = {}\nobjectstore.backend = file\nlog.level = ERROR\n",
                dir.join("tokens").display()
            ),
        )
        .unwrap();
        // Before any module is loaded in this process: SoftHSM reads it at
        // C_Initialize.
        std::env::set_var("SOFTHSM2_CONF", &conf);
        run(Command::new("softhsm2-util")
            .env("SOFTHSM2_CONF", &conf)
            .args([
                "--init-token",
                "--free",
                "--label",
                LABEL,
                "--pin",
                PIN,
                "--so-pin",
                SO_PIN,
            ]));
        let pin_file = dir.join("pin");
        write_private(&pin_file, format!("{PIN}\n").as_bytes());
        let t = Token {
            dir,
            conf,
            module: (*module).to_owned(),
            pin_file,
        };
        for (label, id, kt) in KEYS {
            t.tool(&[
                "--login",
                "--pin",
                PIN,
                "--keypairgen",
                "--key-type",
                kt,
                "--id",
                id,
                "--label",
                label,
            ]);
        }
        Some(t)
    });
    match t {
        Some(t) => Some(t),
        None => skip("softhsm2 (libsofthsm2.so, softhsm2-util) or pkcs11-tool not found"),
    }
}

impl Token {
    /// The URI of the private key labelled `object`, PIN from the pin file.
    pub fn uri(&self, object: &str) -> String {
        format!(
            "pkcs11:token={LABEL};object={object};type=private?module-path={}&pin-source=file:{}",
            self.module,
            self.pin_file.display()
        )
    }

    /// Run pkcs11-tool on the token; its standard output.
    pub fn tool(&self, args: &[&str]) -> String {
        run(Command::new("pkcs11-tool")
            .env("SOFTHSM2_CONF", &self.conf)
            .args(["--module", &self.module, "--token-label", LABEL])
            .args(args))
    }

    /// The public key labelled `label` as pkcs11-tool reads it from the
    /// token: the `EC_POINT` its `--list-objects` prints for EC and EdDSA
    /// keys (pkcs11-tool 0.23 cannot export a P-384 public key), the DER
    /// SPKI `--read-object` writes for RSA.
    pub fn public_key(
        &self,
        label: &str,
        alg: agentsig::Algorithm,
    ) -> agentsig::keys::VerifyingKey {
        use agentsig::keys::VerifyingKey;
        use agentsig::Algorithm;
        if matches!(alg, Algorithm::RsaPssSha512 | Algorithm::RsaV15Sha256) {
            let id = KEYS.iter().find(|k| k.0 == label).unwrap().1;
            return agentsig::keys::verifying_from_spki(&self.public_der(id), Some(alg)).unwrap();
        }
        let listing = self.tool(&["--list-objects", "--type", "pubkey"]);
        let block = listing
            .split("Public Key Object")
            .find(|b| {
                b.lines()
                    .any(|l| l.trim() == format!("label:      {label}"))
            })
            .unwrap_or_else(|| panic!("no public key {label} in {listing}"));
        let hex_point = block
            .lines()
            .find_map(|l| l.trim().strip_prefix("EC_POINT:"))
            .unwrap()
            .trim();
        let der = hex::decode(hex_point).unwrap();
        // DER OCTET STRING: 0x04, a one-byte length, the point.
        assert_eq!(der[0], 0x04);
        assert_eq!(usize::from(der[1]), der.len() - 2);
        let point = &der[2..];
        match alg {
            Algorithm::Ed25519 => VerifyingKey::from_ed25519_bytes(point).unwrap(),
            _ => VerifyingKey::from_sec1_point(alg, point).unwrap(),
        }
    }

    /// The public key with CKA_ID `id`, exported by pkcs11-tool (DER SPKI).
    pub fn public_der(&self, id: &str) -> Vec<u8> {
        let out = self
            .dir
            .join(format!("pub-{id}-{}.der", std::process::id()));
        self.tool(&[
            "--read-object",
            "--type",
            "pubkey",
            "--id",
            id,
            "--output-file",
            out.to_str().unwrap(),
        ]);
        std::fs::read(out).unwrap()
    }
}

/// One response through agentsig's signing tower layer (src/server/layer),
/// around a service whose every body differs, so the layer's signature
/// cache never answers for the token: its status and whether it carries a
/// signature.
pub fn serve_once(layer: &agentsig::server::SignLayer, n: u32) -> (u16, bool) {
    use tower::{Layer as _, ServiceExt as _};
    let svc = layer.layer(tower::service_fn(
        move |_req: http::Request<String>| async move {
            Ok::<_, std::convert::Infallible>(
                http::Response::builder()
                    .header("content-type", "application/json")
                    .body(http_body_util::Full::new(bytes::Bytes::from(format!(
                        "{{\"n\":{n}}}"
                    ))))
                    .unwrap(),
            )
        },
    ));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let res = rt
        .block_on(
            svc.oneshot(
                http::Request::get("/agent.json")
                    .body(String::new())
                    .unwrap(),
            ),
        )
        .unwrap();
    (
        res.status().as_u16(),
        res.headers().contains_key("signature"),
    )
}
